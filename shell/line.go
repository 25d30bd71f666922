// Package shell reads shell command lines the way rules need them: every
// simple command a line may run, each as the words the shell would pass
// to the program, with the words it computes only when it runs marked as
// unknown. It parses with a real shell parser (mvdan.cc/sh, in Bash mode),
// so quoting, escapes, lists, pipelines, substitutions, subshells and
// compound commands are seen as the shell sees them.
package shell

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// MaxLen bounds the command lines Parse reads: a longer line is not
// parsed (and so is never plain, and always in doubt for a deny rule).
const MaxLen = 64 << 10

// Word is one word of a simple command, as the program would receive it.
type Word struct {
	// Text is the word after quote removal; "" when the word is not Static.
	Text string
	// Static is false when the shell computes the word only when it runs:
	// a parameter ($x), a command or process substitution, arithmetic, a
	// pathname pattern (* ? [), a tilde or a brace expansion.
	Static bool
}

// Line is a parsed command line.
type Line struct {
	// Commands are the simple commands the line may run, in the order
	// they appear: in lists and pipelines, subshells and groups, command
	// and process substitutions, conditionals, loops and function bodies.
	Commands [][]Word
	// Plain reports whether the line is exactly one simple command of
	// static words, with no assignment, redirection, pipe, list,
	// background or negation: the only kind of line an allow rule
	// matches.
	Plain bool

	indexOnce sync.Once
	doubt     Match           // what MayRun says for a program the line never names
	names     map[string]bool // every program name MayRun compares, folded
}

// index returns what MayRun says of the line for a pattern whose program
// it never names, and the names it compares with a pattern's program:
// MayRun for a pattern whose program is not among them says the same as
// for none, so it is told without reading the line again.
func (l *Line) index() (Match, map[string]bool) {
	l.indexOnce.Do(func() {
		l.names = map[string]bool{}
		none := Pattern{program: "\x00", seen: l.names} // no program's name: Parse refuses NUL
		l.doubt = none.commands(l, 0)
	})
	return l.doubt, l.names
}

// Programs returns what MayRunLine says of the line for any pattern whose
// program is not among names (No or Maybe), and names: every program name
// (folded, as a pattern's) that MayRunLine compares with a pattern's
// program. A caller holding many patterns need only ask those whose
// program is in names; names must not be modified.
func (l *Line) Programs() (doubt Match, names map[string]bool) {
	return l.index()
}

// Parse parses a command line in Bash's syntax. It fails when the line
// is not valid shell, is longer than MaxLen or holds a NUL byte.
func Parse(src string) (*Line, error) {
	if len(src) > MaxLen {
		return nil, errTooLong
	}
	if strings.IndexByte(src, 0) >= 0 {
		return nil, errNUL
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	l := &Line{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			words := make([]Word, len(c.Args))
			for i, w := range c.Args {
				words[i] = word(w)
			}
			l.Commands = append(l.Commands, words)
		}
		return true
	})
	l.Plain = plain(f, l) && !strings.ContainsFunc(src, oddControl)
	return l, nil
}

// oddControl reports whether r is a control character other than a tab
// or a line feed: the parser and a shell may split words at it
// differently (a carriage return is a blank to one and part of a word to
// the other), so a line holding one is never plain.
func oddControl(r rune) bool {
	return r < ' ' && r != '\t' && r != '\n' || r == 0x7f
}

// parseError is an error of Parse that is not the parser's.
type parseError string

func (e parseError) Error() string { return string(e) }

const (
	errTooLong = parseError("the command line is too long to read")
	errNUL     = parseError("the command line holds a NUL byte")
)

// plain reports whether f, parsed into l, is one simple command of static
// words and nothing else.
func plain(f *syntax.File, l *Line) bool {
	if len(f.Stmts) != 1 || len(l.Commands) != 1 {
		return false
	}
	s := f.Stmts[0]
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || s.Negated || s.Background || s.Coprocess || s.Disown || len(s.Redirs) > 0 || len(c.Assigns) > 0 {
		return false
	}
	for _, w := range l.Commands[0] {
		if !w.Static {
			return false
		}
	}
	return true
}

// word returns w as the program would receive it, or an unknown word
// when the shell computes it.
func word(w *syntax.Word) Word {
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if expands(p.Value, i == 0) {
				return Word{}
			}
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar { // $'…' decodes escapes: left to the shell
				return Word{}
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar { // $"…" is translated by the locale
				return Word{}
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return Word{}
				}
				b.WriteString(unescapeQuoted(l.Value))
			}
		default:
			return Word{}
		}
	}
	return Word{Text: b.String(), Static: true}
}

// expands reports whether an unquoted literal may be changed by the
// shell: a pathname pattern, a brace expansion, or a tilde at the start
// of the word (first) or after "=" or ":".
func expands(lit string, first bool) bool {
	if strings.ContainsAny(lit, "*?[") {
		return true
	}
	if strings.Contains(lit, "{") && (strings.Contains(lit, ",") || strings.Contains(lit, "..")) {
		return true
	}
	for i := strings.IndexByte(lit, '~'); i >= 0; {
		if i == 0 && first || i > 0 && (lit[i-1] == '=' || lit[i-1] == ':') {
			return true
		}
		j := strings.IndexByte(lit[i+1:], '~')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// unescape removes the backslashes of an unquoted literal: "\x" is "x",
// and a backslash before a line break joins the lines.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeQuoted removes the backslashes of a literal in double quotes,
// where a backslash escapes only $ ` " \ and a line break.
func unescapeQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
