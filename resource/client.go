package resource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Client writes to a resource over HTTP.
type Client struct {
	url  string
	http *http.Client
}

// NewClient talks to the resource at addr (host:port).
func NewClient(addr string, timeout time.Duration) *Client {
	return &Client{url: "http://" + addr + "/write", http: &http.Client{Timeout: timeout}}
}

// Write sends r. An error means the outcome is unknown: the request may
// have reached the resource and been applied.
func (c *Client) Write(ctx context.Context, r Request) (Response, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return Response{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Response{}, fmt.Errorf("resource answered %s", resp.Status)
	}
	var out Response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Response{}, fmt.Errorf("resource answer: %w", err)
	}
	return out, nil
}
