// Package layering holds the test that keeps chaos's packages in their
// layers: a package imports packages of its own layer or of the layers
// below it, never one above, so that each floor can be read, tested and
// changed without the floors over it. The "Layout" section of
// docs/architecture.md draws the same layers.
package layering

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/chaos-testing/chaos"

// layers are chaos's packages from the top floor down, each a list of
// package paths relative to the module; a path stands for its
// subpackages too, unless one of them is listed elsewhere, and a path
// ending in "/*" for its subpackages alone (a new checker family is a
// family, whatever its name).
var layers = [][]string{
	{"cmd"},
	{"runner"},
	{"compare", "replay", "shrink", "report"},
	{"bind", "plugins"},
	{"workloads"},
	{"internal/testenv"},
	{"targets"},
	{"nemesis"},
	{"resource", "runfolder", "foreign", "images", "disks", "internal/simhistory", "kubelocal"},
	{"analysis/*"},
	{"analysis", "internal/randhistory"},
	{"ops"},
	{"history"},
	{"plans", "registry", "cluster", "containers", "lazyfs", "nfqueue", "internal/clock", "internal/progress"},
}

// layerOf is the layer (0 the top) of the package at path, relative to
// the module: that of the longest listed path it is, or is under.
func layerOf(path string) (int, bool) {
	best, layer := "", -1
	for i, l := range layers {
		for _, p := range l {
			under, only := strings.CutSuffix(p, "/*")
			in := strings.HasPrefix(path, under+"/") || !only && path == p
			if in && len(p) > len(best) {
				best, layer = p, i
			}
		}
	}
	return layer, layer >= 0
}

// TestNoImportFromAbove: every package of the module is in a layer, and
// imports (outside its tests) nothing of a layer above its own.
func TestNoImportFromAbove(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "results") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		if _, none := err.(*build.NoGoError); none || err == nil && len(pkg.GoFiles) == 0 {
			return nil // no package, or tests alone (this one)
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		from, ok := layerOf(rel)
		if !ok {
			t.Errorf("package %s is in no layer: add it to the layers of this test and to the README's", rel)
			return nil
		}
		seen++
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if to, ok := layerOf(dep); ok && to < from {
				t.Errorf("%s (layer %v) imports %s, of a layer above (%v)", rel, layers[from], dep, layers[to])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 40 {
		t.Errorf("only %d packages found under %s: the walk missed the module", seen, root)
	}
}

// TestLayersListPackagesThatExist: every path the layers list is a
// package, or a folder of packages, of the module: a layer that names a
// package gone would keep a rule that no longer holds anything.
func TestLayersListPackagesThatExist(t *testing.T) {
	for _, l := range layers {
		for _, p := range l {
			if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(strings.TrimSuffix(p, "/*")))); err != nil {
				t.Errorf("layer %v lists %s: %v", l, p, err)
			}
		}
	}
	if !slices.ContainsFunc(layers, func(l []string) bool { return slices.Contains(l, "history") }) {
		t.Error("no layer holds history, the bottom of every run")
	}
}
