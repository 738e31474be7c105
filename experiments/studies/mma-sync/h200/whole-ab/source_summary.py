"""Summarizes an ncu source page (`ncu --import R.ncu-rep --page source --csv --print-source sass`):
samples and stall reasons inside the main loop (the instructions executed at least half as often as the
hottest one) and outside it, and the loop's instruction mix. `python3 source_summary.py FILE.csv[.gz] [x]`
(x also lists the loop, one instruction per line). The committed pages are gzipped (FILE.csv.gz)."""
import csv, gzip, sys, collections
def load(path):
    rows = list(csv.reader((gzip.open if path.endswith('.gz') else open)(path, 'rt')))
    hdr = rows[1]; data = [dict(zip(hdr, r)) for r in rows[2:] if len(r) == len(hdr)]
    return hdr, data
hdr, data = load(sys.argv[1])
stall_cols = [h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
tot = sum(int(r['Warp Stall Sampling (All Samples)'] or 0) for r in data)
ex = [int(r['Instructions Executed'] or 0) for r in data]
hot = max(ex)
print(sys.argv[1].split('/')[-1], 'instructions', len(data), 'total samples', tot, 'max exec', hot)
# the loop: instructions executed >= hot/2
loop = [r for r in data if int(r['Instructions Executed'] or 0) >= hot * 0.5]
ls = sum(int(r['Warp Stall Sampling (All Samples)'] or 0) for r in loop)
print('loop instrs', len(loop), 'samples in loop %.1f%%' % (100 * ls / tot))
agg = collections.Counter()
for r in data:
    for c in stall_cols: agg[c] += int(r[c] or 0)
print('all stalls:', ', '.join(f'{k[6:]}={100*v/tot:.1f}%' for k, v in agg.most_common(8)))
lagg = collections.Counter()
for r in loop:
    for c in stall_cols: lagg[c] += int(r[c] or 0)
print('loop stalls:', ', '.join(f'{k[6:]}={100*v/tot:.1f}%' for k, v in lagg.most_common(8)))
# outside loop by region
out = [r for r in data if r not in loop]
oc = collections.Counter()
for r in out:
    op = r['Source'].split()[0] if r['Source'].split() else '?'
    if op.startswith('@'): op = r['Source'].split()[1]
    oc[op.split('.')[0]] += int(r['Warp Stall Sampling (All Samples)'] or 0)
print('outside loop samples %.1f%%:' % (100 * (tot - ls) / tot), ', '.join(f'{k}={100*v/tot:.1f}%' for k, v in oc.most_common(10)))
mix = collections.Counter()
for r in loop:
    s = r['Source'].split(); op = s[1] if s[0].startswith('@') else s[0]
    mix[op.split('.')[0]] += 1
print('loop mix:', ' '.join(f'{k}:{v}' for k, v in mix.most_common(20)))
if len(sys.argv) > 2:
    for r in loop:
        n = int(r['Warp Stall Sampling (All Samples)'] or 0)
        top = max(stall_cols, key=lambda c: int(r[c] or 0))
        print(f"{n:6d} {top[6:]:<10} {int(r['Instructions Executed'])//1:>9} {r['Source'].strip()[:90]}")
