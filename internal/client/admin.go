package client

import (
	"context"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// CreateNamespace creates a namespace (superusers only). mode is "block"
// or "cache"; storeURI names its bucket.
func (c *Client) CreateNamespace(ctx context.Context, name string, mode pb.NamespaceMode, storeURI string) error {
	_, err := call(func() (*pb.CreateNamespaceResponse, error) {
		return c.meta.CreateNamespace(ctx, &pb.CreateNamespaceRequest{Header: c.header,
			Namespace: &pb.NamespaceInfo{Name: name, Mode: mode, StoreUri: storeURI}})
	})
	return err
}

// DeleteNamespace deletes a namespace and, in the background, its content.
func (c *Client) DeleteNamespace(ctx context.Context, name string) error {
	_, err := call(func() (*pb.DeleteNamespaceResponse, error) {
		return c.meta.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Header: c.header, Name: name})
	})
	return err
}

// Namespaces lists the namespaces.
func (c *Client) Namespaces(ctx context.Context) ([]*pb.NamespaceInfo, error) {
	r, err := call(func() (*pb.ListNamespacesResponse, error) {
		return c.meta.ListNamespaces(ctx, &pb.ListNamespacesRequest{Header: c.header})
	})
	return r.GetNamespaces(), err
}

// Status reports the state of the member the client is connected to.
func (c *Client) Status(ctx context.Context) (*pb.StatusResponse, error) {
	return call(func() (*pb.StatusResponse, error) {
		return c.meta.Status(ctx, &pb.StatusRequest{})
	})
}
