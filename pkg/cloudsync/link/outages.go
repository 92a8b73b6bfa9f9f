package link

// Outages counts the times the link went down since it was made. A
// syncer that sees it change since it last checked the cloud's resource
// version knows the cloud may have restarted, and been restored from a
// backup, meanwhile, even if every failure it saw itself was an answer of
// the cloud (client-go retries a reset connection and reports the next
// answer).
func (l *Link) Outages() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.outages
}
