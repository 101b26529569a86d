package bench

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// cpuFeatures are the vector extensions of this CPU that decide how fast
// a vectorized engine runs (issue 47: DuckDB's kernels gain far more from
// AVX-512 than floe's row loops do), in the names /proc/cpuinfo and vendors
// use: on amd64 AVX2, BMI2 and the AVX-512 subsets (F, BW, VL, VBMI); on
// arm64 ASIMD (NEON), SVE and SVE2. Each as the OS enables it
// (golang.org/x/sys/cpu checks that the OS saves the wider registers).
func cpuFeatures() []string {
	var out []string
	add := func(has bool, name string) {
		if has {
			out = append(out, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64":
		add(cpu.X86.HasAVX2, "avx2")
		add(cpu.X86.HasBMI2, "bmi2")
		add(cpu.X86.HasAVX512F, "avx512f")
		add(cpu.X86.HasAVX512BW, "avx512bw")
		add(cpu.X86.HasAVX512VL, "avx512vl")
		add(cpu.X86.HasAVX512VBMI, "avx512vbmi")
	case "arm64":
		add(cpu.ARM64.HasASIMD, "asimd")
		add(cpu.ARM64.HasSVE, "sve")
		add(cpu.ARM64.HasSVE2, "sve2")
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// cpuFamily is the family a result's figures hold for, by the widest
// vector unit: "amd64-avx512", "amd64-avx2", "amd64", "arm64-sve",
// "arm64-neon", or GOARCH. Results of different families are quoted
// apart (README), since the engines compared gain differently from wider
// vectors.
func cpuFamily(features []string) string {
	has := map[string]bool{}
	for _, f := range features {
		has[f] = true
	}
	switch arch := runtime.GOARCH; {
	case arch == "amd64" && has["avx512f"]:
		return "amd64-avx512"
	case arch == "amd64" && has["avx2"]:
		return "amd64-avx2"
	case arch == "arm64" && has["sve"]:
		return "arm64-sve"
	case arch == "arm64" && has["asimd"]:
		return "arm64-neon"
	default:
		return arch
	}
}
