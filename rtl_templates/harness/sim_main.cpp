// aquas reference SoC simulation harness (Verilator, C++17).
//
// The design is verilated with --prefix Vtop; the RAM image is loaded by the RTL itself from
// the plusarg +aquas_image=<hex file> (aquas/sim writes it from the ELF).
//
// usage: Vtop +aquas_image=FILE [--max-cycles=N] [--result=FILE] [--trace=FILE]
//
// The program's console output goes to stdout. A human-readable summary goes to stderr.
// Machine-readable results are JSON lines written to --result:
//   {"type":"end","reason":"exit|timeout|unattached|trap|bad_access|burst_too_long",
//    "exit_code":N,"cycles":N,...,"bad_access":null|{"master":"core_fetch|core_data|isax",
//    "channel":N|null,"write":B,"address":N,"start":N,"beats":N,"pc":N|null}}
//   {"type":"region","id":N,"cycles":N,"count":N}
//   {"type":"stats","l2_hits":N,"l2_misses":N,"wall_seconds":F,"cycles_per_second":F}
#include "Vtop.h"
#include "verilated.h"
#if VM_TRACE
#if VM_TRACE_FST
#include "verilated_fst_c.h"
typedef VerilatedFstC TraceFile;
#else
#include "verilated_vcd_c.h"
typedef VerilatedVcdC TraceFile;
#endif
#endif

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

namespace {

struct Region {
  uint64_t start = 0;
  bool open = false;
  uint64_t total = 0;
  uint64_t count = 0;
};

const char* opcode_name(unsigned op) {
  switch (op) {
    case 0x0B: return "custom-0";
    case 0x2B: return "custom-1";
    case 0x5B: return "custom-2";
    case 0x7B: return "custom-3";
    default: return "unknown";
  }
}

// An access to an address that is neither RAM nor a device (aquas_mem_system.v).
struct BadAccess {
  bool seen = false;
  unsigned master = 0;  // 0 core instruction fetch, 1 core data, 2 + n ISAX channel n
  bool write = false;
  uint32_t address = 0;  // the first byte address outside RAM and the devices
  uint32_t start = 0;    // the request's address
  unsigned beats = 1;
  uint32_t pc = 0;  // core data: the access's instruction; ISAX: the custom instruction

  std::string describe() const {
    char buf[320];
    const char* dir = write ? "write to" : "read from";
    if (master == 0) {
      std::snprintf(buf, sizeof buf, "core instruction fetch from unmapped address 0x%08x",
                    address);
    } else if (master == 1) {
      std::snprintf(buf, sizeof buf, "core data %s unmapped address 0x%08x at pc 0x%08x",
                    write ? "store to" : "load from", address, pc);
    } else {
      int n = std::snprintf(buf, sizeof buf, "ISAX unit channel %u %s unmapped address 0x%08x",
                            master - 2, dir, address);
      if (beats > 1 && n > 0 && n < static_cast<int>(sizeof buf)) {
        n += std::snprintf(buf + n, sizeof buf - n, " (%u-beat burst from 0x%08x)", beats, start);
      }
      if (n > 0 && n < static_cast<int>(sizeof buf)) {
        std::snprintf(buf + n, sizeof buf - n, " by the custom instruction at pc 0x%08x", pc);
      }
    }
    return buf;
  }

  std::string json() const {
    if (!seen) return "null";
    const char* who = master == 0 ? "core_fetch" : master == 1 ? "core_data" : "isax";
    char chan[16] = "null";
    if (master >= 2) std::snprintf(chan, sizeof chan, "%u", master - 2);
    char pcs[16] = "null";
    if (master != 0) std::snprintf(pcs, sizeof pcs, "%u", pc);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "{\"master\":\"%s\",\"channel\":%s,\"write\":%s,\"address\":%u,"
                  "\"start\":%u,\"beats\":%u,\"pc\":%s}",
                  who, chan, write ? "true" : "false", address, start, beats, pcs);
    return buf;
  }
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t max_cycles = 100000000ULL;
  std::string result_path;
  std::string trace_path;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!std::strncmp(a, "--max-cycles=", 13)) {
      max_cycles = std::strtoull(a + 13, nullptr, 0);
    } else if (!std::strncmp(a, "--result=", 9)) {
      result_path = a + 9;
    } else if (!std::strncmp(a, "--trace=", 8)) {
      trace_path = a + 8;
    } else if (a[0] != '+') {
      std::fprintf(stderr, "sim: unknown argument '%s'\n", a);
      return 64;
    }
  }

  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<Vtop>(ctx.get(), "soc");

#if VM_TRACE
  std::unique_ptr<TraceFile> tfp;
  if (!trace_path.empty()) {
    ctx->traceEverOn(true);
    tfp = std::make_unique<TraceFile>();
    top->trace(tfp.get(), 99);
    tfp->open(trace_path.c_str());
  }
#define DUMP() \
  do { if (tfp) tfp->dump(ctx->time()); } while (0)
#else
  if (!trace_path.empty()) {
    std::fprintf(stderr, "sim: this binary was built without tracing support\n");
    return 64;
  }
#define DUMP() do {} while (0)
#endif

  // Reset: 8 cycles.
  top->rst = 1;
  top->clk = 0;
  top->eval();
  for (int i = 0; i < 8; ++i) {
    top->clk = 1; top->eval(); ctx->timeInc(1); DUMP();
    top->clk = 0; top->eval(); ctx->timeInc(1); DUMP();
  }
  top->rst = 0;

  std::map<uint32_t, Region> regions;
  std::string reason = "timeout";
  std::string detail;
  long long exit_code = -1;
  uint64_t cycle = 0;
  uint64_t unmatched_ends = 0;
  BadAccess bad;
  auto t0 = std::chrono::steady_clock::now();
  bool done = false;
  while (!done && cycle < max_cycles) {
    top->clk = 0; top->eval(); ctx->timeInc(1); DUMP();
    // The outputs below now hold the values of cycle `cycle`.
    if (top->ev_valid) {
      uint32_t d = top->ev_data;
      switch (top->ev_kind) {
        case 1:
          std::fputc(static_cast<int>(d & 0xff), stdout);
          if ((d & 0xff) == '\n') std::fflush(stdout);
          break;
        case 2:
          reason = "exit";
          exit_code = static_cast<int32_t>(d);
          done = true;
          break;
        case 3: {
          Region& r = regions[d];
          r.open = true;
          r.start = cycle;
          break;
        }
        case 4: {
          auto it = regions.find(d);
          if (it == regions.end() || !it->second.open) {
            ++unmatched_ends;
          } else {
            it->second.open = false;
            it->second.total += cycle - it->second.start;
            it->second.count += 1;
          }
          break;
        }
        default:
          break;
      }
    }
    if (top->unattached) {
      unsigned insn = top->unattached_insn;
      unsigned op = insn & 0x7f, f3 = (insn >> 7) & 7, f7 = (insn >> 10) & 0x7f;
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "custom instruction with no ISAX unit attached: opcode %s (0x%02x) "
                    "funct3=%u funct7=0x%02x at pc 0x%08x",
                    opcode_name(op), op, f3, f7, static_cast<unsigned>(top->unattached_pc));
      reason = "unattached";
      detail = buf;
      done = true;
    }
    if (top->core_trap) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "core trapped (illegal instruction, ebreak/ecall or misaligned access) at "
                    "pc 0x%08x", static_cast<unsigned>(top->core_trap_pc));
      reason = "trap";
      detail = buf;
      done = true;
    }
    if (top->burst_too_long) {
      reason = "burst_too_long";
      detail = "ISAX memory request longer than isax_master.max_burst_beats";
      done = true;
    }
    if (top->bad_access) {
      // The memory system holds the request back, so nothing was read or written.
      bad.seen = true;
      bad.master = top->bad_master;
      bad.write = top->bad_write;
      bad.address = top->bad_addr;
      bad.start = top->bad_start;
      bad.beats = top->bad_len + 1u;
      bad.pc = top->bad_pc;
      reason = "bad_access";
      detail = bad.describe();
      done = true;
    }
    top->clk = 1; top->eval(); ctx->timeInc(1); DUMP();
    ++cycle;
  }
  auto t1 = std::chrono::steady_clock::now();
  double wall = std::chrono::duration<double>(t1 - t0).count();
  std::fflush(stdout);
  if (reason == "timeout") {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "cycle limit reached: the program did not exit within %" PRIu64 " cycles",
                  max_cycles);
    detail = buf;
  }
#if VM_TRACE
  if (tfp) tfp->close();
#endif
  top->final();

  std::fprintf(stderr, "sim: %s%s%s after %" PRIu64 " cycles (exit code %lld, %.3f s, %.0f cycles/s)\n",
               reason.c_str(), detail.empty() ? "" : ": ", detail.c_str(), cycle, exit_code,
               wall, wall > 0 ? cycle / wall : 0.0);
  if (!result_path.empty()) {
    FILE* f = std::fopen(result_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "sim: cannot write %s\n", result_path.c_str());
      return 66;
    }
    std::string esc;
    for (char ch : detail) {
      if (ch == '"' || ch == '\\') esc += '\\';
      esc += ch;
    }
    std::fprintf(f,
                 "{\"type\":\"end\",\"reason\":\"%s\",\"exit_code\":%lld,\"cycles\":%" PRIu64
                 ",\"detail\":\"%s\",\"unmatched_region_ends\":%" PRIu64 ",\"bad_access\":%s}\n",
                 reason.c_str(), exit_code, cycle, esc.c_str(), unmatched_ends,
                 bad.json().c_str());
    for (auto& kv : regions) {
      std::fprintf(f,
                   "{\"type\":\"region\",\"id\":%u,\"cycles\":%" PRIu64 ",\"count\":%" PRIu64
                   ",\"open\":%s}\n",
                   kv.first, kv.second.total, kv.second.count, kv.second.open ? "true" : "false");
    }
    std::fprintf(f,
                 "{\"type\":\"stats\",\"l2_hits\":%u,\"l2_misses\":%u,\"wall_seconds\":%.6f,"
                 "\"cycles_per_second\":%.1f}\n",
                 static_cast<unsigned>(top->stat_l2_hits), static_cast<unsigned>(top->stat_l2_misses),
                 wall, wall > 0 ? cycle / wall : 0.0);
    std::fclose(f);
  }
  return 0;
}
