package server

// CacheWaiting is the number of requests waiting for an identical one to be answered.
func CacheWaiting(s *Server) int { return s.o.Cache.Waiting() }
