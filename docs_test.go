package hitl_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markdownLink finds [text](target) links; the target has no spaces.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)|src="([^"]+)"`)

// headingAnchors returns the ids GitHub gives the headings of a page.
func headingAnchors(src string) map[string]bool {
	ids := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r > 127 && r != '—' && r != '…' && r != '’':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		ids[b.String()] = true
	}
	return ids
}

// TestDocsLinks checks the README and every page under docs/: each
// relative link leads to a file that exists (and to a heading of it, for
// #anchors), every page is reachable from the README, and the README fits
// on a screen or two.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	pages := []string{"README.md", "BENCHMARKS.md"}
	for _, pattern := range []string{"docs/*.md", "docs/*/*.md"} {
		more, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, more...)
	}
	links := map[string][]string{} // page → the pages it links to
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(src), -1) {
			target := m[1] + m[2]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
				continue
			}
			if info.IsDir() {
				dirPages, _ := filepath.Glob(filepath.Join(path, "*.md"))
				links[page] = append(links[page], dirPages...)
				continue
			}
			links[page] = append(links[page], filepath.Clean(path))
			if anchor != "" && strings.HasSuffix(path, ".md") {
				to, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !headingAnchors(string(to))[anchor] {
					t.Errorf("%s links to %s, which has no heading #%s", page, path, anchor)
				}
			}
		}
	}

	reached := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		for _, to := range links[page] {
			if !reached[to] {
				reached[to] = true
				queue = append(queue, to)
			}
		}
	}
	for _, page := range pages {
		if !reached[page] {
			t.Errorf("%s cannot be reached from the README by its links", page)
		}
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it to 250 and move the rest to a page under docs/", n)
	}
}

// TestDocsDescribeThePresent fails on words that narrate how the work
// went: the documents describe what is; the history is in git.
func TestDocsDescribeThePresent(t *testing.T) {
	t.Parallel()
	diary := regexp.MustCompile(`(?i)\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|\d+(st|nd|rd|th)|this|last|previous|next) session\b`)
	pages := []string{"README.md", "BENCHMARKS.md"}
	for _, pattern := range []string{"docs/*.md", "docs/*/*.md"} {
		more, _ := filepath.Glob(pattern)
		pages = append(pages, more...)
	}
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range diary.FindAllString(string(src), -1) {
			t.Errorf("%s says %q: describe the present, not how the work went", page, m)
		}
	}
}

// TestDocsNameOnlyRealVariables fails when a page names a HITL_* variable
// that the generated configuration reference (docs/configuration.md) does
// not have: a variable renamed or removed in the code, still in the docs.
func TestDocsNameOnlyRealVariables(t *testing.T) {
	t.Parallel()
	variable := regexp.MustCompile(`HITL_[A-Z0-9_]*[A-Z0-9]`)
	ref, err := os.ReadFile("docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{
		"HITL_UPDATE_SCREENSHOTS": true, // the tests' switch that rewrites the screenshots
		"HITL_TEST_POSTGRES":      true, // the tests' PostgreSQL
	}
	for _, v := range variable.FindAllString(string(ref), -1) {
		known[v] = true
	}
	pages := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "docs/*/*.md"} {
		more, _ := filepath.Glob(pattern)
		pages = append(pages, more...)
	}
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range variable.FindAllString(string(src), -1) {
			if !known[v] && !strings.HasPrefix(v, "HITL_TEST_") && !strings.Contains(string(src), v+"_*") {
				t.Errorf("%s names %s, which docs/configuration.md does not have", page, v)
			}
		}
	}
}
