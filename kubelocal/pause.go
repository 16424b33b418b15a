package kubelocal

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/internal/progress"
)

// pauseMain is the program of every pod's sandbox container: it holds
// the pod's namespaces, reaps what is reparented to it, and ends on
// SIGINT or SIGTERM. No registry serves Kubernetes's own here.
const pauseMain = `package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			if pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
`

// pauseImage returns a docker-archive of the sandbox image, and its name:
// the program, built on first use, as its one layer. Both are kept in
// chaos's cache.
func pauseImage(ctx context.Context, out io.Writer) (archive, ref string, err error) {
	h := sha256.Sum256([]byte(pauseMain))
	tag := hex.EncodeToString(h[:])[:12]
	ref = "chaos/kube-pause:" + tag
	archive, err = images.Cached(filepath.Join(images.CacheDir(), "kube-pause-"+tag+".tar"), func(tmp string) (string, error) {
		if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(pauseMain), 0o644); err != nil {
			return "", err
		}
		task := progress.Start(out, "kubernetes: building the pause program")
		defer task.Stop("")
		if err := images.GoBuild(ctx, tmp, task, "the pause program", []images.GoStep{
			{Note: "creating the module", Args: []string{"mod", "init", "chaos-kube-pause"}},
			{Note: "compiling", Args: []string{"build", "-trimpath", "-ldflags=-s -w", "-o", "pause", "."}},
		}, nil); err != nil {
			return "", err
		}
		bin, err := os.ReadFile(filepath.Join(tmp, "pause"))
		if err != nil {
			return "", err
		}
		data, err := dockerArchive(ref, "pause", bin)
		if err != nil {
			return "", err
		}
		return filepath.Join(tmp, "image.tar"), os.WriteFile(filepath.Join(tmp, "image.tar"), data, 0o644)
	})
	return archive, ref, err
}

// dockerArchive is an image, as `docker save` writes one, of one layer
// holding program at /name, its entrypoint.
func dockerArchive(ref, name string, program []byte) ([]byte, error) {
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	if err := lw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(program))}); err != nil {
		return nil, err
	}
	if _, err := lw.Write(program); err != nil {
		return nil, err
	}
	if err := lw.Close(); err != nil {
		return nil, err
	}
	layerSum := sha256.Sum256(layer.Bytes())
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": []string{"/" + name}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hex.EncodeToString(layerSum[:])}},
	})
	if err != nil {
		return nil, err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := hex.EncodeToString(layerSum[:]) + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{ref}, "Layers": []string{layerName}}})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	w := tar.NewWriter(&out)
	for _, f := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerName, layer.Bytes()}, {"manifest.json", manifest}} {
		if err := w.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.name, err)
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), w.Close()
}
