// Command images builds the real node's images, which no registry can serve
// here, as one archive that `ctr images import` loads into containerd:
//
//	minitask.local/busybox:stand-in   busybox-static from Debian: /bin/sh and
//	                                  the usual commands, users root and
//	                                  nonroot (65532)
//	docker.io/library/alpine:3        the same, standing in for alpine:3,
//	                                  which the samples name
//	docker.io/library/golang:1.26     the same plus this machine's Go
//	                                  toolchain, standing in for golang:1.26
//	minitask.local/nonroot:stand-in   the busybox stand-in whose user is
//	                                  nonroot (65532), as distroless-style
//	                                  images with a shell name theirs
//	minitask.local/noshell:stand-in   one static program (steptool) and
//	                                  nothing else: no shell
//	minitask.local/pause:stand-in     the same program, as the Pods' sandbox
//
// Each stand-in says what it is, in its image description label and in
// /etc/minitask-stand-in. go-containerregistry writes the layers and the
// archive; this program only says what goes in them.
//
//	go run ./hack/realnode/images -busybox /bin/busybox -steptool BIN -goroot DIR -o images.tar
package main

import (
	"archive/tar"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image names, also read by the tests (test/e2enode) and the cluster script.
const (
	BusyboxImage = "minitask.local/busybox:stand-in"
	NonRootImage = "minitask.local/nonroot:stand-in"
	NoShellImage = "minitask.local/noshell:stand-in"
	PauseImage   = "minitask.local/pause:stand-in"
	AlpineImage  = "docker.io/library/alpine:3"
	GolangImage  = "docker.io/library/golang:1.26"
)

// epoch is every file's time, so that the same inputs give the same layers.
var epoch = time.Unix(0, 0).UTC()

func main() {
	busybox := flag.String("busybox", "/bin/busybox", "a statically linked busybox")
	steptool := flag.String("steptool", "", "the statically linked steptool (hack/realnode/steptool)")
	goroot := flag.String("goroot", "", "the Go toolchain for the golang stand-in (go env GOROOT)")
	out := flag.String("o", "images.tar", "the archive to write")
	flag.Parse()
	if *steptool == "" || *goroot == "" {
		log.Fatal("images: -steptool and -goroot are needed")
	}
	shell, err := shellLayer(*busybox)
	check(err)
	tool, err := fileLayer(*steptool, "/steptool")
	check(err)
	goLayer, err := dirLayer(*goroot, "/usr/local/go", "test")
	check(err)

	path := "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	images := map[string]v1.Image{
		BusyboxImage: image(standIn("a busybox image"), v1.Config{Env: []string{path}, Cmd: []string{"sh"}}, shell),
		AlpineImage:  image(standIn("alpine:3"), v1.Config{Env: []string{path}, Cmd: []string{"sh"}}, shell),
		NonRootImage: image(standIn("a busybox image whose user is nonroot"), v1.Config{Env: []string{path}, Cmd: []string{"sh"}, User: "65532"}, shell),
		GolangImage: image(standIn("golang:1.26"), v1.Config{
			Env:        []string{"PATH=/go/bin:/usr/local/go/bin:" + strings.TrimPrefix(path, "PATH="), "GOPATH=/go", "GOTOOLCHAIN=local"},
			WorkingDir: "/go",
			Cmd:        []string{"sh"},
		}, shell, goLayer),
		NoShellImage: image(standIn("an image without a shell"), v1.Config{Entrypoint: []string{"/steptool"}}, tool),
		PauseImage:   image(standIn("the pause image"), v1.Config{Entrypoint: []string{"/steptool", "pause"}}, tool),
	}
	refs := map[name.Reference]v1.Image{}
	for n, img := range images {
		tag, err := name.NewTag(n)
		check(err)
		refs[tag] = img
	}
	check(tarball.MultiRefWriteToFile(*out, refs))
}

// standIn is the description every image carries.
func standIn(what string) string {
	return "minitask's local stand-in for " + what + " (hack/realnode/images): busybox-static from Debian, not the real image"
}

// image is the layers with config, for linux/amd64 or whatever this is.
func image(description string, config v1.Config, layers ...v1.Layer) v1.Image {
	config.Labels = map[string]string{"org.opencontainers.image.description": description}
	marker, err := memLayer(map[string]string{"/etc/minitask-stand-in": description + "\n"})
	check(err)
	img, err := mutate.AppendLayers(empty.Image, append(layers, marker)...)
	check(err)
	cf, err := img.ConfigFile()
	check(err)
	cf = cf.DeepCopy()
	cf.Config = config
	cf.OS, cf.Architecture = "linux", goarch()
	cf.Created = v1.Time{Time: epoch}
	img, err = mutate.ConfigFile(img, cf)
	check(err)
	return img
}

// shellLayer is busybox at /bin/busybox with a link for each of its
// commands, the users root and nonroot (65532, as distroless names it), and
// the directories programs expect to write.
func shellLayer(busybox string) (v1.Layer, error) {
	list, err := exec.Command(busybox, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("listing %s's commands: %w", busybox, err)
	}
	return layer(func(tw *tar.Writer) error {
		for _, d := range []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/etc", "/root", "/home/nonroot", "/go"} {
			if err := dir(tw, d, 0o755); err != nil {
				return err
			}
		}
		for _, d := range []string{"/tmp", "/go"} {
			if err := dir(tw, d, 0o1777); err != nil {
				return err
			}
		}
		if err := copyFile(tw, busybox, "/bin/busybox", 0o755); err != nil {
			return err
		}
		for _, cmd := range strings.Fields(string(list)) {
			target := "/" + cmd
			if target == "/bin/busybox" {
				continue
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: target[1:], Linkname: "/bin/busybox", ModTime: epoch}); err != nil {
				return err
			}
		}
		return writeFiles(tw, map[string]string{
			"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
			"/etc/group":  "root:x:0:\nnonroot:x:65532:\nnogroup:x:65534:\n",
		})
	})
}

// fileLayer is the file src at dst.
func fileLayer(src, dst string) (v1.Layer, error) {
	return layer(func(tw *tar.Writer) error { return copyFile(tw, src, dst, 0o755) })
}

// memLayer is files with their texts.
func memLayer(files map[string]string) (v1.Layer, error) {
	return layer(func(tw *tar.Writer) error { return writeFiles(tw, files) })
}

// writeFiles writes files in the order of their names: a layer is written
// once for its digest and again into the archive, and both must be the
// same bytes, or containerd refuses the layer ("wrong diff id").
func writeFiles(tw *tar.Writer, files map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := file(tw, name, []byte(files[name]), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// dirLayer is the tree src at dst, but for its top-level entries skip.
func dirLayer(src, dst string, skip ...string) (v1.Layer, error) {
	return layer(func(tw *tar.Writer) error {
		return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			for _, s := range skip {
				if rel == s {
					return filepath.SkipDir
				}
			}
			target := filepath.Join(dst, rel)
			info, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case d.IsDir():
				return dir(tw, target, 0o755)
			case info.Mode()&fs.ModeSymlink != 0:
				link, err := os.Readlink(path)
				if err != nil {
					return err
				}
				return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: target[1:], Linkname: link, ModTime: epoch})
			case info.Mode().IsRegular():
				return copyFile(tw, path, target, info.Mode().Perm())
			}
			return nil
		})
	})
}

// layer is what write puts in a tar, as a gzip-compressed layer; the tar is
// written again each time the layer is read, so no layer is held in memory.
func layer(write func(*tar.Writer) error) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		r, w := io.Pipe()
		go func() {
			tw := tar.NewWriter(w)
			err := write(tw)
			if err == nil {
				err = tw.Close()
			}
			w.CloseWithError(err)
		}()
		return r, nil
	}, tarball.WithCompressionLevel(gzip.BestSpeed))
}

func dir(tw *tar.Writer, name string, mode int64) error {
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(name, "/") + "/", Mode: mode, ModTime: epoch})
}

func file(tw *tar.Writer, name string, data []byte, mode int64) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(name, "/"), Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func copyFile(tw *tar.Writer, src, dst string, mode fs.FileMode) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(dst, "/"), Mode: int64(mode), Size: info.Size(), ModTime: epoch}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

func check(err error) {
	if err != nil {
		log.Fatal("images: ", err)
	}
}

// goarch is the images' architecture: this machine's, which runs them.
func goarch() string { return runtime.GOARCH }
