"""Reads the records of the `timeline` variant (harness with TIMELINE=<file>) and prints where a
block's time goes: phase durations (from clock64) and how many blocks per SM were in each phase
on average over the run (from the global timer).
   python3 timeline.py <timeline.bin> [clock_ghz]"""
import struct, sys, statistics as st

path = sys.argv[1]
data = open(path, "rb").read()
recs = [struct.unpack_from("<8Q", data, o) for o in range(0, len(data), 64)]
recs = [r for r in recs if r[1] and r[2] >= r[1]]
phases = ["tile id", "load", "reduce+barrier", "look-back", "prefix barrier", "scan+store"]
rows = []
for smid, g0, g1, a, b, c, polls_slides, bid in recs:
    c1, c2 = a & 0xffffffff, a >> 32
    c3, c4 = b & 0xffffffff, b >> 32
    c5, c6 = c & 0xffffffff, c >> 32
    if not c4:
        c4 = c3
    marks = [0, c1, c2, c3, c4, c5, c6]
    rows.append((smid, g0, g1, marks, polls_slides & 0xffffffff, polls_slides >> 32))
ghz = float(sys.argv[2]) if len(sys.argv) > 2 else st.median((r[3][-1]) / max(1, r[2] - r[1]) for r in rows)
print(f"{len(rows)} tiles, clock {ghz:.3f} GHz (clock64 ticks per global-timer ns)")
t_start = min(r[1] for r in rows)
t_end = max(r[2] for r in rows)
sms = len(set(r[0] for r in rows))
span = t_end - t_start
print(f"kernel span {span / 1e3:.1f} us over {sms} SMs")
print(f"{'phase':<16}{'mean us':>9}{'p50':>8}{'p90':>8}{'p99':>8}{'blocks/SM':>11}")
for i, name in enumerate(phases):
    d = sorted((r[3][i + 1] - r[3][i]) / ghz / 1e3 for r in rows)
    mean = sum(d) / len(d)
    # average number of blocks per SM in this phase = total time in the phase / (span * SMs)
    occ = sum(d) * 1e3 / (span * sms)
    print(f"{name:<16}{mean:9.3f}{d[len(d)//2]:8.3f}{d[len(d)*9//10]:8.3f}{d[len(d)*99//100]:8.3f}{occ:11.2f}")
life = sorted((r[2] - r[1]) / 1e3 for r in rows)
print(f"{'lifetime':<16}{sum(life)/len(life):9.3f}{life[len(life)//2]:8.3f}{life[len(life)*9//10]:8.3f}{life[len(life)*99//100]:8.3f}{sum(life)*1e3/(span*sms):11.2f}")
polls = sorted(r[4] for r in rows)
slides = sorted(r[5] for r in rows)
print(f"window reads per tile: mean {sum(polls)/len(polls):.2f} p50 {polls[len(polls)//2]} p90 {polls[len(polls)*9//10]} p99 {polls[len(polls)*99//100]} max {polls[-1]}")
print(f"window slides per tile: mean {sum(slides)/len(slides):.2f} max {slides[-1]}")
# gap between a block's end and the next block's start on the same SM (launch overhead)
by_sm = {}
for r in rows:
    by_sm.setdefault(r[0], []).append((r[1], r[2]))
