package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// RepoRoot is the repository's top directory, where go.mod is.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..")), nil
}

// AssetsDir is where kube-apiserver, etcd and kubectl are: KUBEBUILDER_ASSETS
// when set (the Makefile sets it), else the toolchain cache that
// hack/install-tools.sh fills.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		out, err := exec.Command(filepath.Join(root, "hack", "install-tools.sh"), "--print", "assets").Output()
		if err != nil {
			return "", fmt.Errorf("locating the toolchain: %w", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make test` or hack/install-tools.sh first", bin, dir)
		}
	}
	return dir, nil
}
