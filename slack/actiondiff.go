package slack

import (
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Code in a card: a shell command, or a file change as a diff. It goes in
// a rich_text_preformatted element, whose text Slack shows as it is, with
// no markup read in it, so a command holding ``` or <!channel> is shown
// exactly as it will run. Long code is cut to a few lines, and the card
// says how many more there are.

const (
	// maxCodeLines and maxCodeChars bound the code shown in a card.
	maxCodeLines = 30
	maxCodeChars = 2500
	// maxDiffCells bounds the work of a line diff (lines × lines); beyond
	// it the old lines are shown removed and the new ones added.
	maxDiffCells = 250000
)

// codeBlock is a preformatted block holding text as it is.
func codeBlock(text string) *slack.RichTextBlock {
	if text == "" {
		text = " " // Slack refuses an empty text element
	}
	pre := &slack.RichTextPreformatted{
		Type:     slack.RTEPreformatted,
		Elements: []slack.RichTextSectionElement{slack.NewRichTextSectionTextElement(text, nil)},
	}
	return slack.NewRichTextBlock("", pre)
}

// clip returns at most maxCodeLines lines of text, and at most
// maxCodeChars characters, and how many lines were left out or cut.
func clip(text string) (string, int) {
	lines := strings.Split(text, "\n")
	shown := make([]string, 0, min(len(lines), maxCodeLines))
	size := 0
	for i, l := range lines {
		n := utf8.RuneCountInString(l) + 1
		if i == maxCodeLines || size+n > maxCodeChars {
			if i == 0 { // one very long first line: show its start
				return truncate(l, maxCodeChars), len(lines)
			}
			return strings.Join(shown, "\n"), len(lines) - i
		}
		shown = append(shown, l)
		size += n
	}
	return text, 0
}

// splitLines splits text into lines; "" has none, and a final line break
// ends the last line rather than starting an empty one.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// added returns text as a diff that adds every line (a new file).
func added(text string) []string {
	lines := splitLines(text)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "+" + l
	}
	return out
}

// lineDiff returns the lines of a diff from old to new: " " kept, "-"
// removed, "+" added, in order (a longest common subsequence of lines).
func lineDiff(old, new string) []string {
	a, b := splitLines(old), splitLines(new)
	if len(a)*len(b) > maxDiffCells {
		out := make([]string, 0, len(a)+len(b))
		for _, l := range a {
			out = append(out, "-"+l)
		}
		return append(out, added(new)...)
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, " "+a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}
