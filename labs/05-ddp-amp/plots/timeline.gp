# timeline.gp — lab 05: one steady step on rank 0: compute on the top row,
# each allreduce on a row of its own below, from its start to the end of its
# wait. A bucket's allreduce (async) is green; a blocking one (ddp-flat's
# whole gradient, AMP's inf/NaN flag: the step waits for it where it is
# called) is purple, on a row named by its size. Variables: data
# (timeline.csv: rank0_kind, id, t0_ms, t1_ms, lane, async, bytes), mode, P.
# Kinds: 0 step, 1 forward, 2 backward (id = layer), 3 optimizer,
# 4 allreduce (id = its number in the step).
set xlabel 'time since the step began (ms)'
stats data using ($1 == 4 ? $2 : NaN) name "ID" nooutput
stats data using ($1 == 4 && $6 == 0 ? 1 : 0) name "BLOCKING" nooutput
stats data using 4 name "T" nooutput
stats data using ($1 == 2 ? $4 : NaN) name "BWD" nooutput
stats data using ($1 == 3 ? $3 : NaN) name "OPT" nooutput
n_blocking = BLOCKING_sum
# the optimizer and a flag's allreduce take microseconds beside backward's
# milliseconds here: a span is drawn at least this wide (ms), so that it shows
wmin = 0.006 * T_max
set title sprintf("Lab 05: one step of %s on rank 0 of %d (this machine's clock: read the order)\n%s\n%s", mode, P, \
    sub("what runs past the last layer's backward, before the optimizer, is communication the step waits for"), \
    sub(sprintf("a span shorter than %.3g ms is drawn %.3g ms wide", wmin, wmin)))
row(k, id) = k == 4 ? -0.5 * id : 1
half(k) = ($4 - $3) > wmin ? ($4 - $3) / 2 : wmin / 2
col(k, async) = k == 1 ? 0x4c72b0 : k == 2 ? 0xdd8452 : k == 3 ? 0xc44e52 : async > 0 ? 0x55a868 : 0x8172b3
size(b) = b >= 2**20 ? sprintf("%.3g MiB", b / 2.0**20) : b >= 1024 ? sprintf("%.3g KiB", b / 1024.0) : sprintf("%d B", b)
name(id, async, bytes) = sprintf("%s %d: %s", async > 0 ? "bucket" : "blocking", id, size(bytes))
set yrange [-0.5 * ID_max - 0.6:1.7]
set xrange [0:T_max * 1.02]
set style fill solid 0.8 border -1
eval key_below(3)
set key maxrows 3
# the wait: from the end of backward to the optimizer, when there is one to see
if (exists("OPT_min") && exists("BWD_max") && OPT_min - BWD_max > 0.05 * T_max) {
    set arrow 1 from BWD_max, 1.45 to OPT_min, 1.45 heads size screen 0.008, 90 lc rgb '#444444'
    set label 1 'wait' at (BWD_max + OPT_min) / 2, 1.55 center tc rgb '#444444'
}
plot data using (($3+$4)/2):(row($1,$2)):(half($1)):(0.18):(col($1,$6)) every ::1 with boxxyerror lc rgb variable \
          notitle, \
     data using (($3+$4)/2):(row($1,$2)):ytic($1 == 4 ? name($2, $6, $7) : "compute") every ::1 with points ps 0 notitle, \
     data using (($3+$4)/2):(row($1,$2)+0.3):($1 == 2 ? sprintf("L%d", $2) : $1 == 3 ? "opt" : "") every ::1 \
          with labels font ",11" notitle, \
     NaN with boxes lc rgb 0x4c72b0 title 'forward', \
     NaN with boxes lc rgb 0xdd8452 title 'backward of layer L', \
     NaN with boxes lc rgb 0xc44e52 title 'optimizer (opt)', \
     NaN with boxes lc rgb 0x55a868 title "bucket's allreduce, to the end of its wait", \
     NaN with boxes lc rgb 0x8172b3 title (n_blocking == 0 ? '' : mode eq 'ddp-flat' ? 'blocking allreduce (the whole gradient)' : \
                                                          'blocking allreduce (AMP: the inf/NaN flag)')
