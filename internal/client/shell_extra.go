package client

// Groups returns the groups the client states for its user (empty when the
// service is left to decide); the CLI uses them to answer "-test -r/-w".
func (c *Client) Groups() []string { return append([]string(nil), c.cfg.Groups...) }

// Namespace returns the namespace of paths that do not name one.
func (c *Client) Namespace() string {
	if c.cfg.Namespace == "" {
		return "default" // the service's name for it too
	}
	return c.cfg.Namespace
}
