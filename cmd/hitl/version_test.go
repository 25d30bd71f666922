package main

import (
	"bytes"
	"github.com/hitl-sh/hitl/internal/turns"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadVersion(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name                   string
		stampV, stampC, stampD string
		info                   *debug.BuildInfo
		want                   versionInfo
	}{
		{"stamped wins", "v1.2.3", "abc123", "2026-12-06T07:00:00Z", vcs,
			versionInfo{Version: "v1.2.3", Commit: "abc123", Modified: true, Date: "2026-12-06T07:00:00Z"}},
		{"from VCS", "dev", "", "", vcs,
			versionInfo{Version: "dev-0123456789ab-dirty", Commit: "0123456789abcdef0123456789abcdef01234567", Modified: true, Date: "2026-12-01T10:00:00Z"}},
		{"go install @version", "dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}},
			versionInfo{Version: "v0.9.0"}},
		{"nothing known", "dev", "", "", nil, versionInfo{Version: "dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
			version, commit, date = tt.stampV, tt.stampC, tt.stampD
			got := readVersion(tt.info)
			got.Go = ""
			if got != tt.want {
				t.Errorf("readVersion = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestWriteVersion(t *testing.T) {
	turns.Parallel(t)
	var b bytes.Buffer
	writeVersion(&b, versionInfo{Version: "v1.2.3", Commit: "abc", Modified: true, Date: "2026-12-06T07:00:00Z", Go: "go1.26 linux/amd64"})
	want := "hitl v1.2.3\ncommit  abc (modified)\ndate    2026-12-06T07:00:00Z\ngo      go1.26 linux/amd64\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeVersion(&b, versionInfo{Version: "dev"})
	if !strings.Contains(b.String(), "commit  unknown\ndate    unknown\n") {
		t.Errorf("unknown commit and date: got\n%s", b.String())
	}
}
