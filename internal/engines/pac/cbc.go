package pac

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lpModel is a MILP in CPLEX LP format, built term by term. Coefficients
// are float64: the solver is the only inexact part of the tool.
type lpModel struct {
	objective []string // terms
	rows      []string // "name: terms op rhs"
	bounds    []string
	general   []string // integer variables
	binary    []string
}

// term formats coefficient c of variable v as an LP term: "+ 2.5 n0".
func term(c float64, v string) string {
	if c < 0 {
		return "- " + num(-c) + " " + v
	}
	return "+ " + num(c) + " " + v
}

// num formats a finite float for the LP file.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// row adds the constraint name: terms op rhs.
func (m *lpModel) row(name string, terms []string, op string, rhs float64) {
	m.rows = append(m.rows, name+": "+strings.Join(terms, " ")+" "+op+" "+num(rhs))
}

// bytes writes the model, one term per line: CoinLpIO reads long lines
// poorly, and the format allows a row to continue on the next line.
func (m *lpModel) bytes() []byte {
	var b bytes.Buffer
	b.WriteString("Minimize\n obj:")
	for _, t := range m.objective {
		b.WriteString("\n  " + t)
	}
	b.WriteString("\nSubject To\n")
	for _, r := range m.rows {
		name, rest, _ := strings.Cut(r, ": ")
		b.WriteString(" " + name + ":")
		for _, f := range splitTerms(rest) {
			b.WriteString("\n  " + f)
		}
		b.WriteString("\n")
	}
	b.WriteString("Bounds\n")
	for _, l := range m.bounds {
		b.WriteString(" " + l + "\n")
	}
	for _, sec := range []struct {
		head string
		vars []string
	}{{"General", m.general}, {"Binary", m.binary}} {
		if len(sec.vars) == 0 {
			continue
		}
		b.WriteString(sec.head + "\n")
		for _, v := range sec.vars {
			b.WriteString(" " + v + "\n")
		}
	}
	b.WriteString("End\n")
	return b.Bytes()
}

// splitTerms splits "+ 2 n0 - 3 y0 <= 5" into "+ 2 n0", "- 3 y0", "<= 5".
func splitTerms(s string) []string {
	fields := strings.Fields(s)
	var out []string
	for i := 0; i < len(fields); {
		if i+2 < len(fields) && (fields[i] == "+" || fields[i] == "-") {
			out = append(out, strings.Join(fields[i:i+3], " "))
			i += 3
			continue
		}
		out = append(out, strings.Join(fields[i:], " "))
		break
	}
	return out
}

// solution is what cbc reported.
type solution struct {
	status string             // a Solver* status
	values map[string]float64 // the variables, when status is optimal or feasible
	gap    *float64           // relative gap, when cbc printed an objective and a bound
	time   time.Duration      // wall-clock, measured here
}

// errEngine is returned when cbc fails: it cannot start, writes no
// solution, or reports a status this tool does not expect (unbounded,
// numerical difficulties). The tool turns it into execution_failed.
var errEngine = errors.New("pac: the cbc engine failed")

// maxLogBytes bounds how much of cbc's log is read back: the summary the
// tool parses is at its end.
const maxLogBytes = 64 << 10

// runCBC solves model with the cbc executable in dir, with limit as its
// own time limit (wall-clock), and returns what it reported. The process
// runs under ctx, which the caller ends shortly after the engine window:
// if ctx ends first, runCBC returns ctx's error.
func runCBC(ctx context.Context, dir string, model []byte, limit time.Duration) (solution, error) {
	lpPath := filepath.Join(dir, "model.lp")
	solPath := filepath.Join(dir, "solution.txt")
	if err := os.WriteFile(lpPath, model, 0o600); err != nil {
		return solution{}, fmt.Errorf("writing the model: %w", err)
	}
	logFile, err := os.Create(filepath.Join(dir, "cbc.log"))
	if err != nil {
		return solution{}, fmt.Errorf("creating the solver log: %w", err)
	}
	defer logFile.Close() //nolint:errcheck // cbc writes the log through its own descriptor

	seconds := strconv.FormatFloat(math.Max(limit.Seconds(), 0.001), 'f', 3, 64)
	cmd := exec.CommandContext(ctx, Engine, lpPath,
		"sec", seconds, "timeMode", "elapsed",
		"solve", "solu", solPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.WaitDelay = time.Second
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return solution{}, ctx.Err()
	}
	sol, err := readSolution(solPath)
	if err != nil {
		if runErr != nil {
			return solution{}, fmt.Errorf("%w: %v; %v", errEngine, runErr, err)
		}
		return solution{}, fmt.Errorf("%w: %v", errEngine, err)
	}
	sol.time = elapsed
	if sol.status == SolverFeasible {
		sol.gap = readGap(logFile)
	}
	return sol, nil
}

// readSolution reads cbc's solution file: a status line, then one line
// per variable ("index name value reduced-cost", marked "**" when it
// breaks a bound).
func readSolution(path string) (solution, error) {
	f, err := os.Open(path)
	if err != nil {
		return solution{}, errors.New("no solution file")
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	if !sc.Scan() {
		return solution{}, errors.New("an empty solution file")
	}
	status, err := solutionStatus(sc.Text())
	if err != nil {
		return solution{}, err
	}
	sol := solution{status: status}
	if status != SolverOptimal && status != SolverFeasible {
		return sol, nil
	}
	sol.values = map[string]float64{}
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "**"))
		if len(fields) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(fields[2], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return solution{}, fmt.Errorf("a malformed value for %s", fields[1])
		}
		sol.values[fields[1]] = v
	}
	if err := sc.Err(); err != nil {
		return solution{}, fmt.Errorf("reading the solution file: %w", err)
	}
	return sol, nil
}

// solutionStatus maps the status line of a solution file. Stopped on time
// without an integer solution writes the LP relaxation ("continuous
// used"): that is no plan, never a feasible one.
func solutionStatus(line string) (string, error) {
	switch {
	case strings.HasPrefix(line, "Optimal"):
		return SolverOptimal, nil
	case strings.HasPrefix(line, "Stopped on time") && strings.Contains(line, "no integer solution"):
		return SolverNoSolution, nil
	case strings.HasPrefix(line, "Stopped on time"):
		return SolverFeasible, nil
	case strings.HasPrefix(line, "Infeasible"), strings.HasPrefix(line, "Integer infeasible"):
		return SolverInfeasible, nil
	}
	status, _, _ := strings.Cut(line, " - ")
	if len(status) > 64 {
		status = status[:64]
	}
	return "", fmt.Errorf("an unexpected solver status %q", status)
}

// readGap returns (objective − bound) / |objective| from the summary at
// the end of cbc's log ("Objective value:", "Lower bound:"), or nil when
// either is missing.
func readGap(log *os.File) *float64 {
	info, err := log.Stat()
	if err != nil {
		return nil
	}
	off := max(info.Size()-maxLogBytes, 0)
	buf := make([]byte, info.Size()-off)
	if _, err := log.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	var obj, bound float64
	var hasObj, hasBound bool
	for line := range strings.Lines(string(buf)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Objective value":
			obj, hasObj = x, true
		case "Lower bound":
			bound, hasBound = x, true
		}
	}
	if !hasObj || !hasBound {
		return nil
	}
	gap := 0.0
	if obj != 0 {
		gap = math.Max(obj-bound, 0) / math.Abs(obj)
	}
	return &gap
}
