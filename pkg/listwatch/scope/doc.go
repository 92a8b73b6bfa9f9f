// Package scope decides whether a read lies within the part of a resource
// the cloud sync holds (its namespace and label and field selectors), with
// apimachinery's selector machinery. Within it the local cache answers
// truthfully, a local 404 included; outside it only the cloud can, and
// offline a list or watch is answered from what is held with a warning
// that names the synced scope. Held is that part as the local API is told
// it, so the packages that decide what is held name it without the API.
package scope
