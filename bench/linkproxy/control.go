package linkproxy

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// Handler serves the proxy's control over HTTP, for a proxy that runs in a
// process of its own ("strata bench proxy"):
//
//	GET /stats                       the Stats as JSON
//	PUT /bandwidth?bytes-per-sec=N   SetBandwidth(N); answers the Stats
//
// Anything else is 404 or 405; a bad N is 400 and changes nothing.
func Handler(p *Proxy) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { writeStats(w, p) })
	mux.HandleFunc("PUT /bandwidth", func(w http.ResponseWriter, r *http.Request) {
		v, err := strconv.ParseFloat(r.URL.Query().Get("bytes-per-sec"), 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			http.Error(w, fmt.Sprintf("bytes-per-sec: want a number of bytes per second, 0 for no limit, not %q",
				r.URL.Query().Get("bytes-per-sec")), http.StatusBadRequest)
			return
		}
		p.SetBandwidth(v)
		writeStats(w, p)
	})
	return mux
}

func writeStats(w http.ResponseWriter, p *Proxy) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p.Stats())
}
