package purchase

// Queued returns how many buyers wait in the activity's queue in this
// process, for tests that must know a buyer queued before they go on.
func (s *Service) Queued(activityID int64) int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if q := s.queues[activityID]; q != nil {
		return len(q.in)
	}
	return 0
}
