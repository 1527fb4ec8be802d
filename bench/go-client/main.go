// Command csi4j-go-bench drives a CSI plugin on a UNIX socket the way the issue 26 author measured it: one client
// on the official CSI Go stubs (generated from the repo's csi.proto at build time by scripts/bench-control-go),
// CreateVolume+DeleteVolume one after the other, then Probe. Every run is bounded by a count and by a time.
// Prints one line per measured figure; -json writes them to a file too.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"syscall"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// codec marshals with the protobuf API the stubs are generated for (google.golang.org/protobuf): Debian's grpc-go
// 1.33 defaults to github.com/golang/protobuf 1.3, which cannot size messages of today's protoc-gen-go.
type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }
func (codec) Unmarshal(data []byte, v interface{}) error {
	return proto.Unmarshal(data, v.(proto.Message))
}
func (codec) Name() string { return "proto" }

type result struct {
	Scenario     string             `json:"scenario"`
	Iterations   int                `json:"iterations"`
	Seconds      float64            `json:"seconds"`
	PerSecond    float64            `json:"per_second"`
	LatencyMsP50 map[string]float64 `json:"p50_ms"`
	LatencyMsP99 map[string]float64 `json:"p99_ms"`
	// ClientCPUMs is this process's own CPU time (user + system) during the scenario: on a small machine the
	// client competes with the server for the same cores.
	ClientCPUMs float64 `json:"client_cpu_ms"`
}

func main() {
	endpoint := flag.String("endpoint", "", "path of the plugin's UNIX socket (a unix:// prefix is accepted)")
	iterations := flag.Int("iterations", 1000, "create+delete iterations at most")
	probes := flag.Int("probes", 3000, "Probe calls at most (0: none)")
	limit := flag.Duration("max-time", 60*time.Second, "time bound of each scenario")
	size := flag.Int64("size", 1<<20, "required_bytes of each volume")
	prefix := flag.String("prefix", "gobench", "volume name prefix (a run's names are unique under it)")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	flag.Parse()
	path := *endpoint
	if len(path) > 7 && path[:7] == "unix://" {
		path = path[7:]
	}
	if path == "" {
		fmt.Fprintln(os.Stderr, "-endpoint is required")
		os.Exit(2)
	}
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	conn, err := grpc.DialContext(ctx, "passthrough:///csi", grpc.WithInsecure(), grpc.WithBlock(), grpc.WithContextDialer(dial),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})))
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		os.Exit(1)
	}
	defer conn.Close()
	var results []result
	if *iterations > 0 {
		r, err := createDelete(csi.NewControllerClient(conn), *iterations, *limit, *size, *prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, "create-delete:", err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	if *probes > 0 {
		r, err := probe(csi.NewIdentityClient(conn), *probes, *limit)
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	for _, r := range results {
		fmt.Printf("%s: %d in %.3f s = %.1f/s", r.Scenario, r.Iterations, r.Seconds, r.PerSecond)
		for _, m := range []string{"CreateVolume", "DeleteVolume", "Probe"} {
			if p50, ok := r.LatencyMsP50[m]; ok {
				fmt.Printf("; %s p50 %.3f ms p99 %.3f ms", m, p50, r.LatencyMsP99[m])
			}
		}
		fmt.Printf("; client CPU %.3f ms per iteration\n", r.ClientCPUMs/float64(r.Iterations))
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// createDelete runs CreateVolume then DeleteVolume of the same volume, n times or until limit has passed.
func createDelete(c csi.ControllerClient, n int, limit time.Duration, size int64, prefix string) (result, error) {
	capability := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	run := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	var creates, deletes []time.Duration
	cpu0 := cpuTime()
	start := time.Now()
	i := 0
	for ; i < n && time.Since(start) < limit; i++ {
		t0 := time.Now()
		created, err := c.CreateVolume(context.Background(), &csi.CreateVolumeRequest{
			Name:               fmt.Sprintf("%s-%d", run, i),
			CapacityRange:      &csi.CapacityRange{RequiredBytes: size},
			VolumeCapabilities: []*csi.VolumeCapability{capability},
		})
		t1 := time.Now()
		if err != nil {
			return result{}, err
		}
		if _, err := c.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: created.GetVolume().GetVolumeId()}); err != nil {
			return result{}, err
		}
		creates = append(creates, t1.Sub(t0))
		deletes = append(deletes, time.Since(t1))
	}
	return summarize("create-delete", i, time.Since(start), cpuTime()-cpu0, map[string][]time.Duration{"CreateVolume": creates, "DeleteVolume": deletes}), nil
}

// probe runs Probe n times or until limit has passed: the RPC floor of the same moment.
func probe(c csi.IdentityClient, n int, limit time.Duration) (result, error) {
	var calls []time.Duration
	cpu0 := cpuTime()
	start := time.Now()
	i := 0
	for ; i < n && time.Since(start) < limit; i++ {
		t0 := time.Now()
		if _, err := c.Probe(context.Background(), &csi.ProbeRequest{}); err != nil {
			return result{}, err
		}
		calls = append(calls, time.Since(t0))
	}
	return summarize("probe", i, time.Since(start), cpuTime()-cpu0, map[string][]time.Duration{"Probe": calls}), nil
}

func summarize(scenario string, n int, took, cpu time.Duration, latencies map[string][]time.Duration) result {
	r := result{Scenario: scenario, Iterations: n, Seconds: took.Seconds(), PerSecond: float64(n) / took.Seconds(),
		LatencyMsP50: map[string]float64{}, LatencyMsP99: map[string]float64{}, ClientCPUMs: ms(cpu)}
	for method, l := range latencies {
		if len(l) == 0 {
			continue
		}
		sort.Slice(l, func(a, b int) bool { return l[a] < l[b] })
		r.LatencyMsP50[method] = ms(l[(len(l)-1)*50/100])
		r.LatencyMsP99[method] = ms(l[(len(l)-1)*99/100])
	}
	return r
}

// cpuTime is the CPU time (user + system) this process has used so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
