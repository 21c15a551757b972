package main

// The waiting-room crowd's report: the CSV and detail files, the verdict and
// the summary, and the chi-square test of the winners' join ranks.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// report writes the CSV and the detail file, and prints the summary.
func (r *roomRun) report(users []*user, series []sample, t0, end time.Time) error {
	cfg := r.cfg
	if cfg.csv != "" {
		var b bytes.Buffer
		b.WriteString("t_s,waiting,admitted,remaining_stock,polls,sold,users_prequeue,users_waiting,users_admitted,users_final\n")
		for _, s := range series {
			fmt.Fprintf(&b, "%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", s.t, s.waiting, s.admitted, s.remain, s.polls, s.sold,
				s.prequeue, s.waitingU, s.admitU, s.final)
		}
		if err := os.WriteFile(cfg.csv, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if cfg.detail != "" {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for _, u := range users {
			_ = enc.Encode(u)
		}
		if err := os.WriteFile(cfg.detail, b.Bytes(), 0o644); err != nil {
			return err
		}
	}

	var sold, toldSoldOut, toldNotAdmitted, nonFinal, lateJoins, posGrew, admitted, etaN, etaOK int64
	buyCodes, finals, joinStates := map[string]int{}, map[string]int{}, map[string]int{}
	var buckets [10]float64
	var drawn []*user // the users whose join was answered before the start: the draw's
	var ratios []float64
	var stuck []*user
	for _, u := range users {
		joinStates[u.JoinState]++
		fin := u.Final
		if u.Reason != "" {
			fin += " " + u.Reason
		}
		finals[fin]++
		if u.JoinState != "prequeue" {
			lateJoins++
		} else {
			drawn = append(drawn, u)
		}
		if !finalState(u.Final) {
			nonFinal++
			stuck = append(stuck, u)
		}
		posGrew += int64(u.PosGrew)
		if u.Buy != "" {
			buyCodes[u.Buy]++
		}
		switch u.Buy { // every purchase here was made while admitted
		case "409 sold_out":
			toldSoldOut++
		case "403 not_admitted":
			toldNotAdmitted++
		}
		if u.Buy == "201" {
			sold++
			buckets[u.Rank*10/len(users)]++
		}
		if u.admitted {
			admitted++
			if u.FirstETA >= 0 && u.AdmitMs != 0 {
				etaN++
				took := float64(u.AdmitMs-u.ETAMs) / 1000
				eta := float64(u.FirstETA)
				if math.Abs(took-eta) <= 0.5*eta {
					etaOK++
				}
				if eta > 0 {
					ratios = append(ratios, took/eta)
				}
			}
		}
	}
	chi2, p := chiSquare(buckets, sold)
	drawChi2, drawP, drawFair := drawFairness(drawn)
	// Below 50 winners a bucket expects fewer than 5: the test says
	// nothing, and is not held against the run.
	fair := sold < 50 || chi2 < chi2Critical
	slices.Sort(ratios)
	q := func(f float64) float64 {
		if len(ratios) == 0 {
			return 0
		}
		return round2(ratios[int(f*float64(len(ratios)-1))])
	}
	dur := end.Sub(t0).Seconds()
	perURL := make([]map[string]any, len(cfg.urls))
	for i, u := range cfg.urls {
		perURL[i] = map[string]any{"url": u, "polls": r.polls[i].Load(), "polls_per_s": round2(float64(r.polls[i].Load()) / dur),
			"joins": r.joins[i].Load(), "purchases": r.buys[i].Load()}
	}
	var peakPolls int64
	for _, s := range series {
		peakPolls = max(peakPolls, s.polls)
	}
	latency := map[string]any{}
	for kind, l := range r.lat {
		slices.Sort(l)
		at := func(f float64) float64 { return round2(l[int(f*float64(len(l)-1))]) }
		latency[kind] = map[string]any{"n": len(l), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1)}
	}
	sellOut := -1.0
	if ns := r.lastSale.Load(); ns > 0 {
		sellOut = round2(time.Unix(0, ns).Sub(r.starts).Seconds())
	}
	var failures []string
	if sold > r.total {
		failures = append(failures, fmt.Sprintf("OVERSOLD: %d units sold of %d", sold, r.total))
	}
	if sold < r.total {
		failures = append(failures, fmt.Sprintf("%d units sold of %d: not all sold", sold, r.total))
	}
	if toldSoldOut > 0 {
		failures = append(failures, fmt.Sprintf("%d admitted buyers told sold_out", toldSoldOut))
	}
	if nonFinal > 0 {
		failures = append(failures, fmt.Sprintf("%d users not in a final state", nonFinal))
	}
	if !fair {
		failures = append(failures, fmt.Sprintf("fairness: chi-square %.2f (df 9, critical %.2f at p=0.01) over %d winners; %d joins answered after the start; among the draw's %d members alone: chi-square %.2f (p %.4f)",
			chi2, chi2Critical, sold, lateJoins, len(drawn), drawChi2, drawP))
	}
	for i, u := range stuck {
		if i == 10 {
			break
		}
		b, _ := json.Marshal(u)
		fmt.Fprintf(os.Stderr, "crowd: not final: %s\n", b)
	}
	summary := map[string]any{
		"users": len(users), "total": r.total, "units_sold": sold, "admitted_told_sold_out": toldSoldOut,
		"admitted_told_not_admitted": toldNotAdmitted,
		"non_final":                  nonFinal, "users_admitted": admitted, "no_shows": finals["gone"], "no_show_share": r.cfg.noShow, "join_states": joinStates, "late_joins": lateJoins,
		"purchase_answers": buyCodes, "final_states": finals, "position_grew": posGrew,
		"errors_retried":   counts(&r.statusErrors),
		"fairness_in_draw": drawFair,
		"fairness": map[string]any{"chi2": round2(chi2), "df": 9, "p_value": round4(p), "critical_p01": chi2Critical,
			"buckets": buckets, "pass": fair, "tested": sold >= 50},
		"eta": map[string]any{"admitted_with_eta": etaN, "within_50pct": etaOK,
			"share":             round4(float64(etaOK) / math.Max(float64(etaN), 1)),
			"took_over_eta_p10": q(0.10), "p50": q(0.50), "p90": q(0.90)},
		"instances": perURL, "peak_polls_per_s": peakPolls, "latency": latency, "duration_s": round2(dur),
		"sell_out_s": sellOut, "join_window_s": round2(r.starts.Add(-cfg.margin).Sub(t0).Seconds()),
		"pass": len(failures) == 0, "failures": failures, "long_poll": r.pollReport(users),
	}
	if err := json.NewEncoder(os.Stdout).Encode(summary); err != nil {
		return err
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// chi2Survival is P(X >= x) for X chi-square with k degrees of freedom:
// the regularized upper incomplete gamma Q(k/2, x/2).
func chi2Survival(x float64, k int) float64 {
	a, z := float64(k)/2, x/2
	if z <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if z < a+1 { // series for P, then Q = 1 - P
		sum, term := 1/a, 1/a
		for n := 1; n < 500; n++ {
			term *= z / (a + float64(n))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-z+a*math.Log(z)-lg)
	}
	// continued fraction for Q (Lentz)
	const tiny = 1e-300
	b := z + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 500; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-z+a*math.Log(z)-lg) * h
}

// chiSquare is the chi-square statistic of winners over ten buckets that
// expect as many each, and its p-value (9 degrees of freedom).
func chiSquare(buckets [10]float64, winners int64) (chi2, p float64) {
	if winners == 0 {
		return 0, 1
	}
	exp := float64(winners) / 10
	for _, o := range buckets {
		chi2 += (o - exp) * (o - exp) / exp
	}
	return chi2, chi2Survival(chi2, 9)
}

// drawFairness is the fairness test over the draw's members alone (the
// users whose join was answered before the start), by their order of
// joining. A join answered after the start (a box too loaded to answer the
// joins in time) is placed by arrival, behind the draw, as the contract
// says: this tells a draw that is not fair from joins that came late. The
// gate stays the test over every user.
func drawFairness(drawn []*user) (chi2, p float64, summary map[string]any) {
	var buckets [10]float64
	var winners int64
	for k, u := range drawn {
		if u.Buy == "201" {
			winners++
			buckets[k*10/len(drawn)]++
		}
	}
	chi2, p = chiSquare(buckets, winners)
	return chi2, p, map[string]any{"chi2": round2(chi2), "p_value": round4(p), "users": len(drawn), "winners": winners, "buckets": buckets}
}
