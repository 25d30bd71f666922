package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Stamped at build time, for example:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD) \
//	  -X main.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/hitl
//
// Left unset, they come from the build information: the module version
// (go install …@v1.2.3), the VCS revision and its commit time.
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// versionInfo is what hitl version prints.
type versionInfo struct {
	Version  string // v1.2.3, or dev-<revision>
	Commit   string // the full revision, or "" when unknown
	Modified bool   // built from a tree with uncommitted changes
	Date     string // when it was built (stamped) or committed (from VCS), or ""
	Go       string // the Go release and platform
}

// readVersion returns the stamped version, filled in from info (which may
// be nil) where nothing was stamped.
func readVersion(info *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: version, Commit: commit, Date: date, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if info == nil {
		return v
	}
	var rev, vcsTime string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Commit == "" {
		v.Commit = rev
	}
	if v.Date == "" {
		v.Date = vcsTime
	}
	if v.Version == "dev" {
		switch {
		case info.Main.Version != "" && info.Main.Version != "(devel)":
			v.Version = info.Main.Version
		case rev != "":
			short := rev
			if len(short) > 12 {
				short = short[:12]
			}
			v.Version = "dev-" + short
			if v.Modified {
				v.Version += "-dirty"
			}
		}
	}
	return v
}

// buildVersion is the version alone, as logs and /healthz show it.
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return readVersion(info).Version
}

// runVersion prints the version, the commit and the build date.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "hitl version",
		"Prints the version of this binary, the commit it was built from and when,\n"+
			"as stamped at build time (-ldflags -X main.version=… -X main.commit=…\n"+
			"-X main.date=…), or else as Go recorded them (the module version, the VCS\n"+
			"revision and its commit time).", stderr)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	info, _ := debug.ReadBuildInfo()
	writeVersion(stdout, readVersion(info))
	return 0
}

// writeVersion writes v as hitl version prints it.
func writeVersion(w io.Writer, v versionInfo) {
	fmt.Fprintln(w, "hitl", v.Version)
	c := v.Commit
	switch {
	case c == "":
		c = "unknown"
	case v.Modified:
		c += " (modified)"
	}
	d := v.Date
	if d == "" {
		d = "unknown"
	}
	fmt.Fprintf(w, "commit  %s\ndate    %s\ngo      %s\n", c, d, v.Go)
}
