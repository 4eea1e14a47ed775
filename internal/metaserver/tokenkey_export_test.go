package metaserver

// TokenKey returns signing key id as the service's state holds it: what
// someone who read a member's disk would hold, with which the tests forge
// tokens.
func (s *Server) TokenKey(id uint32) []byte {
	st, err := s.tokenState()
	if err != nil {
		return nil
	}
	return st.keys[id]
}
