package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apiserver/pkg/endpoints/responsewriter"
)

// The mistakes a server of the tests' own makes on purpose (--mistake), each one that hand-written
// servers of the Kubernetes API have been found to make, so that a run shows how it is caught (and
// one liberty the contract allows, so that a run shows it is not). Each
// wraps the whole handler chain and rewrites what the real server answered about flunders (in JSON,
// as the runs ask for it).
var mistakes = map[string]func(http.Handler) http.Handler{
	// A streaming list's initial ADDEDs are sent, but not the bookmark that ends them
	// (k8s.io/initial-events-end): an informer that streams its list waits for it for ever.
	"no-initial-events-end": func(next http.Handler) http.Handler {
		return rewriteWatch(next, func(ev map[string]any) bool {
			return ev["type"] == "BOOKMARK" && annotation(ev, "k8s.io/initial-events-end") == "true"
		}, nil)
	},
	// Not a mistake: LISTs are served whole, `limit` and `continue` ignored, which the contract allows
	// ("servers may choose not to support the limit argument", ListOptions.limit). A run reports the
	// server as one that does not paginate.
	"no-pagination": func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if strings.Contains(r.URL.Path, "/flunders") && q.Get("watch") == "" {
				q.Del("limit")
				q.Del("continue")
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	},
	// Not a mistake: resourceVersions that are not integers, which the contract allows (clients must
	// treat them as opaque: ObjectMeta.resourceVersion). Each the server sends is its own with an "r"
	// before it, and each a request sends loses the "r" again. listwatch compares a server's RVs with
	// etcd's revisions, so a run against this server stops at its first write, saying why.
	"opaque-rvs": opaqueRVs,
	// A resourceVersion too old for the server (410 Gone, reason Expired) is answered as a 500: a
	// client that relists on 410 retries the same request instead.
	"expired-as-500": func(next http.Handler) http.Handler {
		expired := func(code any) bool { n, ok := code.(float64); return ok && n == http.StatusGone }
		return rewriteWatch(next, nil, func(ev map[string]any) {
			if ev["type"] != "ERROR" {
				return
			}
			if status, ok := ev["object"].(map[string]any); ok && expired(status["code"]) {
				status["code"], status["reason"] = http.StatusInternalServerError, "InternalError"
			}
		}, withStatus(http.StatusGone, http.StatusInternalServerError, "InternalError"))
	},
}

func mistakeNames() string {
	names := make([]string, 0, len(mistakes))
	for n := range mistakes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func annotation(ev map[string]any, key string) string {
	obj, _ := ev["object"].(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	v, _ := annotations[key].(string)
	return v
}

// plain is a rewrite of a whole answer that is not a watch: from HTTP status `from` to `to`, with the
// Status body's code and reason to match.
type plain struct {
	from, to int
	reason   string
}

func withStatus(from, to int, reason string) *plain {
	return &plain{from: from, to: to, reason: reason}
}

// rewriteWatch wraps next: on a watch (watch=true or 1), each JSON event line that drop says to drop
// is not sent and each is passed through edit first; on any other request answered with status
// plain.from, the status and the Status body become plain.to's.
func rewriteWatch(next http.Handler, drop func(map[string]any) bool, edit func(map[string]any), rest ...*plain) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only the resource the runs write: the server's own loopback informer (on fischers, for
		// BanFlunder) must still sync, or every write would wait for it.
		if !strings.Contains(r.URL.Path, "/flunders") {
			next.ServeHTTP(w, r)
			return
		}
		// Answers it rewrites are read as JSON lines: no gzip (which the watch handler applies per
		// flush when the client accepts it, as client-go's does).
		r.Header.Del("Accept-Encoding")
		q := r.URL.Query().Get("watch")
		if q == "true" || q == "1" {
			lw := &lineWriter{ResponseWriter: w, drop: drop, edit: edit}
			next.ServeHTTP(responsewriter.WrapForHTTP1Or2(lw), r)
			lw.flushRest()
			return
		}
		if len(rest) == 0 || rest[0] == nil {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, rule: rest[0]}
		next.ServeHTTP(responsewriter.WrapForHTTP1Or2(sw), r)
		sw.finish()
	})
}

// lineWriter passes a watch's stream on line by line (the JSON watch encoder ends each event with a
// newline), rewriting or dropping events.
type lineWriter struct {
	http.ResponseWriter
	drop    func(map[string]any) bool
	edit    func(map[string]any)
	pending []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.pending = append(l.pending, b...)
	for {
		i := bytes.IndexByte(l.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := l.pending[:i+1]
		l.pending = l.pending[i+1:]
		if err := l.pass(line); err != nil {
			return 0, err
		}
	}
}

func (l *lineWriter) pass(line []byte) error {
	var ev map[string]any
	if json.Unmarshal(line, &ev) != nil {
		_, err := l.ResponseWriter.Write(line)
		return err
	}
	if l.drop != nil && l.drop(ev) {
		return nil
	}
	if l.edit != nil {
		l.edit(ev)
		edited, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		line = append(edited, '\n')
	}
	_, err := l.ResponseWriter.Write(line)
	return err
}

func (l *lineWriter) flushRest() {
	if len(l.pending) > 0 {
		_ = l.pass(l.pending)
		l.pending = nil
	}
}

// Unwrap lets the API server's filters see the connection's own writer (its http.Flusher and
// CloseNotifier, which the watch handler needs), as responsewriter.WrapForHTTP1Or2 asks.
func (l *lineWriter) Unwrap() http.ResponseWriter { return l.ResponseWriter }

// statusWriter holds an answer with the status it rewrites until it is whole, then sends it
// rewritten; other answers pass straight through.
type statusWriter struct {
	http.ResponseWriter
	rule *plain
	held bool
	body bytes.Buffer
}

func (s *statusWriter) WriteHeader(code int) {
	if code == s.rule.from {
		s.held = true
		return
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.held {
		return s.body.Write(b)
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) finish() {
	if !s.held {
		return
	}
	body := s.body.Bytes()
	var status map[string]any
	if json.Unmarshal(body, &status) == nil {
		status["code"], status["reason"] = s.rule.to, s.rule.reason
		if edited, err := json.Marshal(status); err == nil {
			body = append(edited, '\n')
		}
	}
	s.ResponseWriter.Header().Del("Content-Length")
	s.ResponseWriter.WriteHeader(s.rule.to)
	_, _ = s.ResponseWriter.Write(body)
}

var (
	sentRV     = regexp.MustCompile(`"resourceVersion":"([0-9]+)"`)
	receivedRV = regexp.MustCompile(`"resourceVersion":"r([0-9]+)"`)
)

// opaqueRVs is the "opaque-rvs" server: RVs with an "r" before them on the wire, the real ones inside.
func opaqueRVs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/flunders") {
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		if rv := q.Get("resourceVersion"); strings.HasPrefix(rv, "r") {
			q.Set("resourceVersion", rv[1:])
			r.URL.RawQuery = q.Encode()
		}
		if r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = receivedRV.ReplaceAll(body, []byte(`"resourceVersion":"$1"`))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		r.Header.Del("Accept-Encoding")
		if watch := r.URL.Query().Get("watch"); watch == "true" || watch == "1" {
			rewriteWatch(next, nil, func(ev map[string]any) {
				obj, _ := ev["object"].(map[string]any)
				if meta, ok := obj["metadata"].(map[string]any); ok {
					if rv, ok := meta["resourceVersion"].(string); ok && rv != "" {
						meta["resourceVersion"] = "r" + rv
					}
				}
			}).ServeHTTP(w, r)
			return
		}
		bw := &bodyWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(responsewriter.WrapForHTTP1Or2(bw), r)
		body := sentRV.ReplaceAll(bw.body.Bytes(), []byte(`"resourceVersion":"r$1"`))
		w.Header().Del("Content-Length")
		w.WriteHeader(bw.code)
		_, _ = w.Write(body)
	})
}

// bodyWriter holds a whole answer, its status and body, for a rewrite once it is complete.
type bodyWriter struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (b *bodyWriter) WriteHeader(code int) { b.code = code }

func (b *bodyWriter) Write(p []byte) (int, error) { return b.body.Write(p) }

func (b *bodyWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }
