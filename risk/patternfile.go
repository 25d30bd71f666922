package risk

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadPatterns reads a file of risk patterns: one "REGEXP" or
// "REGEXP => why" a line (see ParsePattern); blank lines and lines whose
// first non-blank character is # are skipped. The first bad line fails
// the whole file, with its number.
func ReadPatterns(r io.Reader) ([]Pattern, error) {
	var out []Pattern
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		p, err := ParsePattern(strings.TrimRight(line, "\r"))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read risk patterns: %w", err)
	}
	return out, nil
}

// ReadPatternsFile is ReadPatterns of the file at path; its errors name
// the file.
func ReadPatternsFile(path string) ([]Pattern, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := ReadPatterns(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}
