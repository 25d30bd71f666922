package slack

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Markdown to Slack's mrkdwn. Slack's dialect differs from Markdown in
// what matters here: *bold* rather than **bold**, _italic_, ~strike~,
// <url|text> links, no headings, and &, < and > must be escaped. Anything
// not recognised stays as text, escaped, so nothing a question says can
// become a mention (<!channel>) or a disguised link.

// markdownPatterns are the Markdown the conversion recognises.
type markdownPatterns struct {
	fence, heading, bullet, quote, rule, link, autolink, bold, italic, strike, placeholder *regexp.Regexp
}

// markdown compiles the patterns when first used, not at every start of
// hitl (an agent's command hook starts it for each tool call).
var markdown = sync.OnceValue(func() *markdownPatterns {
	return &markdownPatterns{
		fence:       regexp.MustCompile("^\\s*(```|~~~)"),
		heading:     regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`),
		bullet:      regexp.MustCompile(`^(\s*)[-*+]\s+`),
		quote:       regexp.MustCompile(`^\s{0,3}>\s?`),
		rule:        regexp.MustCompile(`^\s{0,3}([-*_])(\s*[-*_]){2,}\s*$`),
		link:        regexp.MustCompile(`!?\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`),
		autolink:    regexp.MustCompile(`<((?:https?|mailto):[^>\s]+)>`),
		bold:        regexp.MustCompile(`\*\*([^*\n]+?)\*\*|__([^_\n]+?)__`),
		italic:      regexp.MustCompile(`(^|[^\w*])\*([^*\s](?:[^*\n]*?[^*\s])?)\*`),
		strike:      regexp.MustCompile(`~~([^~\n]+?)~~`),
		placeholder: regexp.MustCompile("\x00(\\d+)\x00"),
	}
})

// escape escapes the three characters Slack's mrkdwn reserves.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// escapeMax is escape(s) cut to at most n runes (n > 1), ending with
// "…" when cut, never in the middle of an escape.
func escapeMax(s string, n int) string {
	if e := escape(s); utf8.RuneCountInString(e) <= n {
		return e
	}
	var b strings.Builder
	size := 0
	for _, r := range s {
		piece := escape(string(r))
		w := utf8.RuneCountInString(piece)
		if size+w > n-1 {
			break
		}
		b.WriteString(piece)
		size += w
	}
	return b.String() + "…"
}

// plainText is s for a message's text, its fallback and notification:
// at most n runes, escaped, so that a question's "<!channel>" or
// "<https://evil.example|docs>" is shown as written instead of alerting
// the channel or disguising a link (Slack reads the text's markup too).
func plainText(s string, n int) string {
	return escape(truncate(s, n))
}

// mrkdwn converts Markdown to Slack mrkdwn.
func mrkdwn(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	inFence := false
	fence := markdown().fence
	for _, line := range lines {
		if fence.MatchString(line) {
			inFence = !inFence
			out = append(out, "```")
			continue
		}
		if inFence {
			out = append(out, escape(line))
			continue
		}
		out = append(out, mrkdwnLine(line))
	}
	if inFence {
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}

// mrkdwnLine converts one line outside code blocks.
func mrkdwnLine(line string) string {
	prefix := ""
	md := markdown()
	switch {
	case md.rule.MatchString(line):
		return "──────────"
	case md.heading.MatchString(line):
		text := md.heading.FindStringSubmatch(line)[1]
		if text == "" {
			return ""
		}
		return "*" + strings.ReplaceAll(inline(text), "*", "") + "*"
	case md.quote.MatchString(line):
		prefix, line = ">", md.quote.ReplaceAllString(line, "")
		if line != "" {
			prefix = "> "
		}
	}
	if m := md.bullet.FindStringSubmatch(line); m != nil {
		prefix += m[1] + "• "
		line = line[len(m[0]):]
	}
	return prefix + inline(line)
}

// inline converts the inline markup of text: code spans are kept (and
// escaped), links become <url|text>, emphasis takes Slack's markers.
func inline(text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			b.WriteString(spans(text))
			return b.String()
		}
		j := strings.IndexByte(text[i+1:], '`')
		if j < 0 {
			b.WriteString(spans(text))
			return b.String()
		}
		b.WriteString(spans(text[:i]))
		b.WriteString("`" + escape(text[i+1:i+1+j]) + "`")
		text = text[i+2+j:]
	}
}

// spans converts text without code spans.
func spans(text string) string {
	var kept []string
	md := markdown()
	keep := func(s string) string {
		kept = append(kept, s)
		return "\x00" + strconv.Itoa(len(kept)-1) + "\x00"
	}
	text = md.link.ReplaceAllStringFunc(text, func(m string) string {
		sub := md.link.FindStringSubmatch(m)
		label, url := sub[1], sub[2]
		if !safeURL(url) {
			return m
		}
		if label == "" {
			label = url
		}
		// Slack ends a link's text at "|" and ">": escaped, they cannot.
		return keep("<" + escapeURL(url) + "|" + escape(strings.ReplaceAll(label, "|", "¦")) + ">")
	})
	text = md.autolink.ReplaceAllStringFunc(text, func(m string) string {
		return keep("<" + escapeURL(m[1:len(m)-1]) + ">")
	})
	text = escape(text)
	text = md.bold.ReplaceAllString(text, "\x01$1$2\x01")
	text = md.italic.ReplaceAllString(text, "${1}_${2}_")
	text = md.strike.ReplaceAllString(text, "~$1~")
	text = strings.ReplaceAll(text, "\x01", "*")
	return md.placeholder.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(m[1 : len(m)-1])
		return kept[n]
	})
}

// safeURL reports whether a link may be made of url: web and mail links
// only (no javascript:, no Slack's own <!…> or <@…> syntax).
func safeURL(url string) bool {
	l := strings.ToLower(url)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "mailto:")
}

// escapeURL escapes what would end a link early.
func escapeURL(url string) string {
	return strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C").Replace(url)
}

// truncate shortens s to at most n runes, ending with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// truncateMrkdwn shortens converted mrkdwn without cutting an escape, a
// link or a code block in two: it cuts the Markdown and converts again
// until the result fits. Each round cuts at least one rune, so it ends.
func truncateMrkdwn(md string, n int) string {
	out := mrkdwn(md)
	for utf8.RuneCountInString(out) > n {
		r := []rune(md)
		keep := max(0, min(len(r)*n/utf8.RuneCountInString(out), len(r)-2))
		md = strings.TrimRight(string(r[:keep]), "\\`[*_~") + "…"
		out = mrkdwn(md)
	}
	return out
}
