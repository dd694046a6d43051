package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

// docExample is one curl command of a shell block of the docs.
type docExample struct {
	// file is the page, relative to the repository root; line is where
	// the command begins (1-based).
	file string
	line int
	// command is the command as the shell reads it: its continuation
	// lines and multi-line quoted arguments included.
	command string
	// status is the HTTP status the page shows for it (the status line of
	// an `http` block right after a block holding this one command); 0
	// when the page shows none, which means any 2xx. code is the problem
	// code that block's body shows, if any.
	status int
	code   string
}

func (e docExample) String() string { return fmt.Sprintf("%s:%d", e.file, e.line) }

// docPlaceholders are the names the examples use for what only a running
// server knows, and what the test puts in their place. The address is
// replaced in the command's text; the variables are set in the shell's
// environment, as a reader's shell would hold them.
var docPlaceholders = struct {
	address string   // replaced by the test server's host:port
	vars    []string // set in the environment
}{
	address: "localhost:8080",
	vars: []string{
		"TOKEN", // a user token of the account "me" (README: token create --user me)
		"ID",    // the id of the job answered by the latest earlier example of the same page
	},
}

// docPages lists the pages whose examples run: the README, docs/*.md and
// docs/tools/*.md, in that order, each page's examples in page order.
func docPages(t *testing.T) []string {
	t.Helper()
	root := testkit.Root()
	pages := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "docs/tools/*.md"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(found)
		for _, f := range found {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
	}
	return pages
}

var (
	fenceRe      = regexp.MustCompile("^\\s*```\\s*([A-Za-z0-9_-]*)")
	statusLineRe = regexp.MustCompile(`^HTTP/[0-9.]+ ([1-5][0-9][0-9])\b`)
	problemRe    = regexp.MustCompile(`"code"\s*:\s*"([^"]+)"`)
	varRe        = regexp.MustCompile(`\$\{?([A-Z_][A-Z0-9_]*)`)
)

// shellBlock is a fenced block of a page: its info string, its lines and
// the line number of its first content line.
type shellBlock struct {
	info  string
	first int
	lines []string
}

// fencedBlocks returns the fenced code blocks of a Markdown page in order.
func fencedBlocks(text string) []shellBlock {
	var blocks []shellBlock
	var cur *shellBlock
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			if cur == nil {
				cur = &shellBlock{info: m[1], first: n + 1}
				continue
			}
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, line)
		}
	}
	return blocks
}

// curlCommands returns the commands of a shell block that start with
// curl, each with its line number. A command goes on past a line ending in
// a backslash and past the end of a line inside quotes.
func curlCommands(b shellBlock) (lines []int, commands []string) {
	for i := 0; i < len(b.lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(b.lines[i]), "curl ") {
			continue
		}
		start := i
		var sb strings.Builder
		for ; i < len(b.lines); i++ {
			sb.WriteString(b.lines[i])
			if complete(sb.String()) {
				break
			}
			sb.WriteByte('\n')
		}
		lines = append(lines, b.first+start)
		commands = append(commands, strings.TrimSpace(sb.String()))
	}
	return lines, commands
}

// complete reports whether s, read by a POSIX shell, ends a command at its
// end: no quote is open and the last line does not end in a backslash.
func complete(s string) bool {
	var single, double, escaped bool
	for _, c := range s {
		switch {
		case escaped:
			escaped = false
		case single:
			single = c != '\''
		case c == '\\':
			escaped = true
		case double:
			double = c != '"'
		case c == '\'':
			single = true
		case c == '"':
			double = true
		}
	}
	return !single && !double && !escaped
}

// docExamples extracts the curl examples of the pages.
func docExamples(t *testing.T, pages []string) []docExample {
	t.Helper()
	var out []docExample
	for _, page := range pages {
		text, err := os.ReadFile(filepath.Join(testkit.Root(), page))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pageExamples(page, string(text))...)
	}
	return out
}

// pageExamples extracts the curl examples of one page's text.
func pageExamples(page, text string) []docExample {
	var out []docExample
	blocks := fencedBlocks(text)
	for i, b := range blocks {
		switch b.info {
		case "sh", "shell", "bash":
		default:
			continue
		}
		lines, commands := curlCommands(b)
		var status int
		var code string
		if len(commands) == 1 && i+1 < len(blocks) && blocks[i+1].info == "http" && len(blocks[i+1].lines) > 0 {
			shown := blocks[i+1]
			if m := statusLineRe.FindStringSubmatch(shown.lines[0]); m != nil {
				status, _ = strconv.Atoi(m[1])
			}
			if m := problemRe.FindStringSubmatch(strings.Join(shown.lines, "\n")); m != nil {
				code = m[1]
			}
		}
		for j, c := range commands {
			out = append(out, docExample{file: page, line: lines[j], command: c, status: status, code: code})
		}
	}
	return out
}

// TestDocsExamplesExtraction checks the reading of examples from a page:
// continued and multi-line quoted commands, line numbers, the status and
// code of a shown answer, and blocks that are not shell.
func TestDocsExamplesExtraction(t *testing.T) {
	page := strings.Join([]string{
		"# A page", // 1
		"",
		"```sh",
		"TOKEN=$(toolhost token create --user me)",
		"curl -s localhost:8080/a", // 5
		"# then:",
		"curl -s localhost:8080/b \\",
		"  -d '{\"a\": 1}' -H \"X: it's\"", // 8: a quote inside the other kind ends nothing
		"curl -s localhost:8080/c -d '{",   // 9
		"  \"a\": \"b\"",
		"}'",
		"```",
		"",
		"```sh",
		"curl -si localhost:8080/d", // 15
		"```",
		"",
		"```http",
		"HTTP/1.1 422 Unprocessable Entity",
		"",
		`{"status":422,"code":"tools.run.invalid_input","issues":[{"code":"enum"}]}`,
		"```",
		"",
		"```json",
		"curl -s localhost:8080/not-shell",
		"```",
	}, "\n")
	got := pageExamples("p.md", page)
	want := []docExample{
		{file: "p.md", line: 5, command: "curl -s localhost:8080/a"},
		{file: "p.md", line: 7, command: "curl -s localhost:8080/b \\\n  -d '{\"a\": 1}' -H \"X: it's\""},
		{file: "p.md", line: 9, command: "curl -s localhost:8080/c -d '{\n  \"a\": \"b\"\n}'"},
		{file: "p.md", line: 15, command: "curl -si localhost:8080/d", status: 422, code: "tools.run.invalid_input"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d examples %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("example %d: got line %d %q status %d code %q\nwant line %d %q status %d code %q", i,
				got[i].line, got[i].command, got[i].status, got[i].code,
				want[i].line, want[i].command, want[i].status, want[i].code)
		}
	}
}

// requireTool skips the test when a program it runs is missing, and fails
// it under CI=true, where .ci/run installs it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing on PATH; CI=true requires it", name)
	}
	t.Skipf("%s is missing on PATH: install it to run this test", name)
	return ""
}

// TestDocsExamples runs every curl example of the README and of docs/
// with the real curl against a real server on loopback — the bundled
// modules (as `make wasm` builds them) in its tools folder, the native
// packages, the guard in report mode as `make run` serves it — and checks
// that curl succeeds and that the answer's status is the one the page
// shows, or a 2xx when it shows none. A failing example is named by its
// page and line.
func TestDocsExamples(t *testing.T) {
	requireTool(t, "curl")
	sh := requireTool(t, "sh")
	for _, p := range engines.Packages() {
		testkit.RequireEngines(t, p.Name, p.MissingEngines())
	}
	examples := docExamples(t, docPages(t))
	if len(examples) == 0 {
		t.Fatal("no curl example found in the README or docs/")
	}
	t.Logf("%d curl examples", len(examples))

	// The bundled packages one of whose tools an example names, as make
	// wasm builds them: loading the others (seven packages, 40 MB of
	// modules) only slows the server's start and shutdown, which under
	// the race detector overran the test's shutdown deadline.
	modules := map[string][]byte{}
	mains, err := filepath.Glob(filepath.Join(testkit.Root(), "plugins-src", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("no bundled tool package in plugins-src/ (%v)", err)
	}
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		if named(t, m, examples) {
			modules[name+".wasm"] = module(t, "plugins-src/"+name)
		}
	}
	if len(modules) == 0 {
		t.Fatal("no example names a bundled tool")
	}
	r := startConfigured(t, modules, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	token, err := r.srv.Accounts().CreateToken(context.Background(), "me")
	if err != nil {
		t.Fatal(err)
	}

	// The examples run in a folder of their own, holding the files they
	// upload.
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "letter.pdf"), readPDF(t, "letter_3pages.pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	address := strings.TrimPrefix(r.url, "http://")

	vars := map[string]string{"TOKEN": token}
	page := ""
	for _, ex := range examples {
		if ex.file != page {
			page, vars["ID"] = ex.file, ""
		}
		t.Run(ex.String(), func(t *testing.T) {
			for _, m := range varRe.FindAllStringSubmatch(ex.command, -1) {
				if !slices.Contains(docPlaceholders.vars, m[1]) {
					t.Fatalf("%s: $%s is not a placeholder the test knows (%v)", ex, m[1], docPlaceholders.vars)
				}
				if vars[m[1]] == "" {
					t.Fatalf("%s: $%s has no value: no earlier example of %s answered one", ex, m[1], ex.file)
				}
			}
			headers := filepath.Join(work, "headers")
			if err := os.Remove(headers); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			// The header dump gives the status whatever the example prints;
			// --max-time bounds an example that would wait for ever (an
			// event stream whose job never ends).
			command := strings.ReplaceAll(ex.command, docPlaceholders.address, address) +
				" --dump-header " + headers + " --max-time 90"
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, sh, "-c", command)
			cmd.WaitDelay = 5 * time.Second
			cmd.Dir = work
			// HOME is the work folder so that no ~/.curlrc changes curl.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
			for name, v := range vars {
				cmd.Env = append(cmd.Env, name+"="+v)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: curl failed: %v\n%s\ncommand: %s", ex, err, stderr.Bytes(), ex.command)
			}
			dump, err := os.ReadFile(headers)
			if err != nil {
				t.Fatalf("%s: %v", ex, err)
			}
			status := lastStatus(dump)
			body := stdout.Bytes()
			switch {
			case ex.status == 0 && (status < 200 || status > 299):
				t.Errorf("%s: answered %d, want a 2xx (the page shows no other status)\ncommand: %s\nbody: %s", ex, status, ex.command, body)
			case ex.status != 0 && status != ex.status:
				t.Errorf("%s: answered %d, want %d as the page shows\ncommand: %s\nbody: %s", ex, status, ex.status, ex.command, body)
			}
			if ex.code != "" {
				var p struct{ Code string }
				if err := json.Unmarshal(problemBody(body), &p); err != nil || p.Code != ex.code {
					t.Errorf("%s: answered code %q, want %q as the page shows\nbody: %s", ex, p.Code, ex.code, body)
				}
			}
			var doc struct{ ID string }
			if json.Unmarshal(body, &doc) == nil && strings.HasPrefix(doc.ID, "job_") {
				vars["ID"] = doc.ID
			}
			t.Logf("%s: %d %.300s", ex, status, body)
		})
	}
}

// lastStatus is the status of the last response in a curl header dump
// (a 100 Continue may come first).
func lastStatus(dump []byte) int {
	status := 0
	for _, line := range strings.Split(string(dump), "\n") {
		if m := statusLineRe.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			status, _ = strconv.Atoi(m[1])
		}
	}
	return status
}

// problemBody is the body of an answer that curl printed with its headers
// (-i) or without them.
func problemBody(out []byte) []byte {
	if bytes.HasPrefix(out, []byte("HTTP/")) {
		if i := bytes.Index(out, []byte("\r\n\r\n")); i >= 0 {
			return out[i+4:]
		}
	}
	return out
}

// serviceCode finds the tool codes a bundled package's main.go declares.
var serviceCode = regexp.MustCompile(`bundled\.Service\("([a-z0-9_]+)"`)

// named reports whether an example names one of the tools the bundled
// package main.go declares: its run route, or its code as a JSON string
// (a compute item's tool_code).
func named(t *testing.T, main string, examples []docExample) bool {
	t.Helper()
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range serviceCode.FindAllSubmatch(src, -1) {
		code := string(m[1])
		for _, e := range examples {
			if strings.Contains(e.command, "/tools/"+code+"/") || strings.Contains(e.command, `"`+code+`"`) {
				return true
			}
		}
	}
	return false
}
