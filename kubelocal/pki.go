package kubelocal

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The cluster's credentials: a CA and the API server's certificate, the
// service accounts' signing key, and a static token for each user (the
// components, the node, chaos as admin), each in a kubeconfig. The local
// cluster is reachable only from its own network namespace, so static
// tokens, as MACHINE.md's bring-up used, are enough.

// users are the cluster's users by file name: the name the API server
// knows, and its groups (RBAC's defaults bind the components' names; the
// Node authorizer wants system:node:<name> in system:nodes).
func users(node string) map[string][2]string {
	return map[string][2]string{
		"admin":              {"chaos", "system:masters"},
		"controller-manager": {"system:kube-controller-manager", ""},
		"scheduler":          {"system:kube-scheduler", ""},
		"kubelet":            {"system:node:" + node, "system:nodes"},
	}
}

// writePKI writes dir's credentials for a cluster whose API server is at
// nodeIP, and one kubeconfig per user, <user>.kubeconfig.
func writePKI(dir, node string, nodeIP net.IP) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "chaos-kube-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return err
	}
	serveKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serve := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "localhost"},
		IPAddresses: []net.IP{nodeIP, net.IPv4(127, 0, 0, 1), serviceIP},
	}
	serveDER, err := x509.CreateCertificate(rand.Reader, serve, ca, &serveKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"ca.crt":        pemBlock("CERTIFICATE", caDER),
		"apiserver.crt": pemBlock("CERTIFICATE", serveDER),
		"sa.pub":        pemBlock("PUBLIC KEY", saPub),
	}
	for name, key := range map[string]*ecdsa.PrivateKey{"apiserver.key": serveKey, "sa.key": saKey} {
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		files[name] = pemBlock("EC PRIVATE KEY", der)
	}
	var tokens strings.Builder
	for file, u := range users(node) {
		token, err := randomToken()
		if err != nil {
			return err
		}
		// token,user,uid,"group1,group2"
		fmt.Fprintf(&tokens, "%s,%s,%s,%q\n", token, u[0], u[0], u[1])
		files[file+".kubeconfig"] = kubeconfig(fmt.Sprintf("https://%s:%d", nodeIP, apiPort), files["ca.crt"], u[0], token)
		files[file+".token"] = []byte(token)
	}
	files["tokens.csv"] = []byte(tokens.String())
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// kubeconfig is a kubeconfig that reaches server, trusting ca, as user
// with a bearer token.
func kubeconfig(server string, ca []byte, user, token string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: chaos
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %q
  user:
    token: %s
contexts:
- name: chaos
  context: {cluster: chaos, user: %q}
current-context: chaos
`, server, base64.StdEncoding.EncodeToString(ca), user, token, user)
}
