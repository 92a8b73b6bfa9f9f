// Package cloudsync keeps the edge copy of each configured resource in step
// with the cloud kube-apiserver.
//
// For every resource a Syncer lists (paged) and then watches the cloud with
// bookmarks. Each batch of watch events is first committed to the Store in
// one transaction, together with the resource's watermark, and only then
// applied to the Cache that local clients read. The cloud's
// resourceVersions are kept unchanged.
//
// On start a Syncer resumes the watch from the stored watermark. It relists
// only when the cloud answers 410 Gone/Expired; the relist result is diffed
// against the stored state and published as ADDED, MODIFIED and DELETED
// events (deletes at the new list resourceVersion), so local watchers carry
// on without a relist of their own. Connection failures are retried with
// jittered exponential backoff.
package cloudsync
