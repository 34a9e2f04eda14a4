package gitbuild

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Root is the top of the git work tree that holds dir.
func Root(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("gitbuild: building an earlier commit needs git and the repository (git rev-parse in %s): %w: %s", dir, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// Agentree builds ./cmd/agentree of commit, from the repository at root,
// into dir and returns the binary's path. The source goes to dir too. The
// build is -trimpath, so a second build of one commit from another
// directory is a hit in the shared build cache.
func Agentree(ctx context.Context, root, commit, dir string) (string, error) {
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		return "", fmt.Errorf("gitbuild: commit %s is not in %s (a shallow clone? fetch the full history): %w: %s", commit, root, err, out)
	}
	short := commit
	if len(short) > 12 {
		short = short[:12]
	}
	src := filepath.Join(dir, "src-"+short)
	if err := extract(ctx, root, commit, src); err != nil {
		return "", err
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("gitbuild: building %s needs the go command on PATH: %w", commit, err)
	}
	bin := filepath.Join(dir, "agentree-"+short)
	build := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-o", bin, "./cmd/agentree")
	build.Dir = src
	// A go.work above dir would build the current tree's packages instead.
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gitbuild: build ./cmd/agentree of %s: %w\n%s", commit, err, out)
	}
	return bin, nil
}

// extract writes the tree of commit into dst, as git archive gives it.
func extract(ctx context.Context, root, commit, dst string) error {
	cmd := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("gitbuild: git archive %s: %w", commit, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("gitbuild: git archive %s: %w", commit, err)
	}
	if err := untar(stdout, dst); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("gitbuild: read git archive of %s: %w", commit, err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("gitbuild: git archive %s: %w: %s", commit, err, stderr.String())
	}
	return nil
}

// untar writes the archive r into dst, refusing paths that leave it.
func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dst, filepath.FromSlash(hdr.Name))
		if name != dst && !strings.HasPrefix(name, dst+string(filepath.Separator)) {
			return fmt.Errorf("archive path %q escapes %s", hdr.Name, dst)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, hdr.FileInfo().Mode().Perm())
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(hdr.Linkname, name); err != nil {
				return err
			}
		}
	}
}

// Files lists the paths under dir (a folder of the repository, such as
// "migrations") in commit's tree, relative to dir: what a deploy compares
// to tell which of the current tree's files the commit lacks.
func Files(ctx context.Context, root, commit, dir string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "ls-tree", "--name-only", commit, dir+"/").Output()
	if err != nil {
		return nil, fmt.Errorf("gitbuild: list %s of %s: %w", dir, commit, err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			names = append(names, strings.TrimPrefix(l, dir+"/"))
		}
	}
	return names, nil
}
