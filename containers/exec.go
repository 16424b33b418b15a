package containers

import (
	"bytes"
	"context"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// Exec runs argv inside the container, with the container's own
// (unprivileged) rights, and returns its combined output.
func (r *Run) Exec(ctx context.Context, c Container, argv ...string) ([]byte, error) {
	ex, err := r.cli.ContainerExecCreate(ctx, c.ID, container.ExecOptions{
		Cmd: argv, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("exec %v in %s: %w", argv, c.Name, err)
	}
	att, err := r.cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("exec %v in %s: %w", argv, c.Name, err)
	}
	defer att.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, att.Reader); err != nil {
		return out.Bytes(), fmt.Errorf("exec %v in %s: %w", argv, c.Name, err)
	}
	info, err := r.cli.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		return out.Bytes(), fmt.Errorf("exec %v in %s: %w", argv, c.Name, err)
	}
	if info.ExitCode != 0 {
		return out.Bytes(), fmt.Errorf("exec %v in %s: exit status %d: %s", argv, c.Name, info.ExitCode, bytes.TrimSpace(out.Bytes()))
	}
	return out.Bytes(), nil
}

// Restart starts a container again after its main process died (a kill
// fault). Its file system, and so any data directory in it, is kept.
func (r *Run) Restart(ctx context.Context, c Container) (Container, error) {
	if err := r.cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		return c, fmt.Errorf("restart %s: %w", c.Name, err)
	}
	info, err := r.cli.ContainerInspect(ctx, c.ID)
	if err != nil {
		return c, fmt.Errorf("inspect %s: %w", c.Name, err)
	}
	if ep := info.NetworkSettings.Networks[r.network]; ep != nil {
		c.IP = ep.IPAddress
	}
	r.track(c, info)
	return c, nil
}
