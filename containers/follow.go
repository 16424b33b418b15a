package containers

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// FollowLog streams what the container writes from now on, stdout and
// stderr together, until ctx ends or the reader is closed.
func (r *Run) FollowLog(ctx context.Context, c Container) (io.ReadCloser, error) {
	since := strconv.FormatFloat(float64(time.Now().UnixNano())/1e9, 'f', 9, 64)
	rc, err := r.cli.ContainerLogs(ctx, c.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true, Since: since})
	if err != nil {
		return nil, fmt.Errorf("follow the log of %s: %w", c.Name, err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, pw, rc)
		rc.Close()
		pw.CloseWithError(err)
	}()
	return readCloser{pr, func() error { rc.Close(); return pr.Close() }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }
