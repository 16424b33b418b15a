package containers

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"path/filepath"

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

// WriteFile puts a file into the container's file system, running or
// not: how the harness leaves a note for a node's next start.
func (r *Run) WriteFile(ctx context.Context, c Container, path string, data []byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: filepath.Base(path), Mode: 0o644, Size: int64(len(data))}); err != nil {
		return err
	}
	tw.Write(data)
	if err := tw.Close(); err != nil {
		return err
	}
	if err := r.cli.CopyToContainer(ctx, c.ID, filepath.Dir(path), &buf, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("write %s in %s: %w", path, c.Name, err)
	}
	return nil
}
