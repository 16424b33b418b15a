package kubelocal

import (
	"strings"
	"testing"
)

func TestFromProxy(t *testing.T) {
	mod := `module k8s.io/kubernetes

require (
	k8s.io/api v0.0.0
	k8s.io/utils v0.0.0-20250604170112-4c0f3b243397
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/odd => ./staging/src/k8s.io/other
	github.com/x/y => github.com/x/y v1.2.3
)
`
	got, err := fromProxy([]byte(mod))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\tk8s.io/api => k8s.io/api v0.34.4\n",
		"\tk8s.io/client-go => k8s.io/client-go v0.34.4\n",
		"\tk8s.io/odd => ./staging/src/k8s.io/other\n", // not its own directory: left
		"\tgithub.com/x/y => github.com/x/y v1.2.3\n",
		"\tk8s.io/api v0.0.0\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "./staging/src/k8s.io/api") {
		t.Errorf("a staging replace left:\n%s", got)
	}
	if _, err := fromProxy([]byte("module k8s.io/kubernetes\n")); err == nil || !strings.Contains(err.Error(), "staging") {
		t.Errorf("a go.mod without staging replaces: got %v", err)
	}
}
