package nemesis

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/plans"
)

// Disked is a target whose data servers keep their data in a directory of
// their own (containers.Spec.DataDir), which the disk faults act on
// (power-loss, bitflip, truncate: those with Traits.Disks).
type Disked interface {
	// FileClasses are the kinds of file in a data server's directory, by
	// name, each with the patterns (as filepath.Glob takes them, relative
	// to the directory) that match its files.
	FileClasses() map[string][]string
}

// checkDisk refuses a disk fault on a target without a data directory,
// or of a class of files (class, "" for none in particular) that the
// target does not have.
func checkDisk(kind, class string, s Setting) error {
	d, err := need[Disked](s, kind, "keeps no data directory that a disk fault could act on")
	if err != nil {
		return err
	}
	if classes := d.FileClasses(); class != "" && classes[class] == nil {
		return plans.Fieldf("class", "%q: target %s has no such class of files (it has: %s)", class, s.TargetKind, strings.Join(slices.Sorted(maps.Keys(classes)), ", "))
	}
	return nil
}

// dataFiles lists node p's files of a class, as paths relative to dir, its
// data directory on the host as the node sees it (DiskEnv.DataDir).
// ErrNoDisk for a node without a disk.
func dataFiles(w *World, env DiskEnv, p Process, class string) (dir string, files []string, err error) {
	if dir, err = env.DataDir(p); err != nil {
		return "", nil, err
	}
	for _, pattern := range w.Target.(Disked).FileClasses()[class] {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return "", nil, fmt.Errorf("files of class %s: %w", class, err)
		}
		for _, path := range m {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
	}
	return dir, files, nil
}
