package server

// CacheWaiting is the number of requests waiting for an identical one to be answered.
func CacheWaiting(s *Server) int { return s.o.Cache.Waiting() }

// CacheLeadersLeft is the number of leaders whose client left while their round went on.
func CacheLeadersLeft(s *Server) int64 { return s.o.Cache.LeadersLeft() }
