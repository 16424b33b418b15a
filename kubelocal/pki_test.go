package kubelocal

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The API server's certificate is the CA's and names the addresses
// clients reach it by; every user has a token the API server knows and a
// kubeconfig that carries it.
func TestWritePKI(t *testing.T) {
	dir := t.TempDir()
	if err := writePKI(dir, "n", nodeIP); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cert := func(name string) *x509.Certificate {
		block, _ := pem.Decode(read(name))
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert("ca.crt"))
	serve := cert("apiserver.crt")
	for _, host := range []string{"10.77.0.1", "10.96.0.1", "127.0.0.1", "kubernetes.default.svc"} {
		if _, err := serve.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("the API server's certificate for %s: %v", host, err)
		}
	}
	tokens := string(read("tokens.csv"))
	for file, u := range users("n") {
		token := strings.TrimSpace(string(read(file + ".token")))
		if !strings.Contains(tokens, token+","+u[0]+",") {
			t.Errorf("%s's token is not the API server's for %s:\n%s", file, u[0], tokens)
		}
		if kc := string(read(file + ".kubeconfig")); !strings.Contains(kc, "token: "+token) || !strings.Contains(kc, "server: https://10.77.0.1:6443") {
			t.Errorf("%s.kubeconfig:\n%s", file, kc)
		}
	}
	if !strings.Contains(tokens, `,system:node:n,system:node:n,"system:nodes"`) {
		t.Errorf("the kubelet is not in system:nodes:\n%s", tokens)
	}
}

// The sandbox image is a docker-archive: a manifest naming its config and
// its one layer, which holds the program as its entrypoint.
func TestDockerArchive(t *testing.T) {
	data, err := dockerArchive("chaos/kube-pause:x", "pause", []byte("program"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 || manifest[0].RepoTags[0] != "chaos/kube-pause:x" {
		t.Fatalf("manifest %s: %v", files["manifest.json"], err)
	}
	var config struct {
		Config struct{ Entrypoint []string }
	}
	if err := json.Unmarshal(files[manifest[0].Config], &config); err != nil || config.Config.Entrypoint[0] != "/pause" {
		t.Fatalf("config %s: %v", files[manifest[0].Config], err)
	}
	lr := tar.NewReader(bytes.NewReader(files[manifest[0].Layers[0]]))
	h, err := lr.Next()
	if err != nil || h.Name != "pause" || h.Mode&0o111 == 0 {
		t.Fatalf("layer: %+v %v", h, err)
	}
	if got, _ := io.ReadAll(lr); string(got) != "program" {
		t.Fatalf("layer holds %q", got)
	}
}
