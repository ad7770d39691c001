# step_memory.gp — lab 06: what rank 0 holds during one training step, by
# kind, stacked, after each allocation and free of its ledger
# (kit_mem_watch): each change is one slot of the x axis, as wide as the
# next. Under the axis each layer's hooks are marked where they begin (F2:
# layer 2's forward, B2: its backward, a line lower; "end": after layer 0's
# backward, the last reduce-scatters and the update), and the forward and backward passes
# are named above the plot. A step that allocates and frees nothing (DDP,
# ZeRO-1) is one slot: its stack, flat for the whole step.
# Variables: data (memory_step.csv: event, params, grads, optim, acts, comm,
# total, pass, layer), P, mode.
stats data using "event" name "E" nooutput
n_slots = E_max + 1
flat = n_slots <= 1
set title sprintf("Lab 06: rank 0's memory during one step, %s on %d rank(s)\n%s", mode, P, \
    sub(flat ? "nothing is allocated or freed during the step: what it holds is flat, the whole step" \
             : "each slot: the ledger after one allocation or free; F: a layer's forward, B: its backward"))
set ylabel 'memory held (MiB)'
MiB = 1024.0 * 1024.0
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xrange [0:n_slots]
set style fill solid 1.0 noborder
# the key: five entries, two to a row (three would not fit the canvas's
# width), so three rows below the plot, and the bottom margin makes room for
# all three: reserved for two, its third row covered the x label
eval key_below(3)
set key horizontal maxcols 2 samplen 1.5
if (flat) {
    set xlabel 'the step'
    unset xtics
} else {
    # (only here: a flat step has no pass to find, and stats would warn of no data)
    stats data using (column("pass") == 1 ? column("event") : NaN) name "FW" nooutput
    stats data using (column("pass") == 2 ? column("event") : NaN) name "BW" nooutput
    set xlabel 'allocations and frees during the step, in order'
    # a tic where each layer's hook begins; the passes named above the plot
    unset xtics
    set xlabel offset 0, -2.3
    if (exists("FW_min")) {
        set arrow 1 from FW_min, graph 1.02 to FW_max + 1, graph 1.02 heads size screen 0.006, 90 lc rgb '#444444'
        set label 1 'forward' at (FW_min + FW_max + 1) / 2, graph 1.065 center tc rgb '#444444'
    }
    if (exists("BW_min")) {
        set arrow 2 from BW_min, graph 1.02 to BW_max + 1, graph 1.02 heads size screen 0.006, 90 lc rgb '#444444'
        set label 2 'backward' at (BW_min + BW_max + 1) / 2, graph 1.065 center tc rgb '#444444'
    }
}
set tmargin 6.5
set title offset 0, 1.2
# the label of a slot where the step enters another layer's hook (or ends)
last = -9
mark(p, l) = p == 1 ? sprintf("F%d", l) : p == 2 ? sprintf("B%d", l) : p == 3 ? "end" : ""
tic(p, l) = (key = 10 * p + l, changed = key != last, last = key, changed ? mark(p, l) : "")
# the stack, bottom to top: parameters, gradients, momentum, activations, scratch
lo(k) = k == 0 ? 0 : k == 1 ? column("params") : k == 2 ? column("params") + column("grads") : \
        k == 3 ? column("params") + column("grads") + column("optim") : column("total") - column("comm")
hi(k) = k == 4 ? column("total") : lo(k + 1)
bar(k) = (column("event") + 0.5)
# one plot command (an SVG holds one plot): the stack, then the marks under the axis
box(k, c, t) = sprintf("%s data using (bar(%d)):((lo(%d) + hi(%d)) / 2 / MiB):(0.5):((hi(%d) - lo(%d)) / 2 / MiB) " . \
                       "with boxxyerror fc rgb '%s' title '%s'", k > 0 ? "," : "", k, k, k, k, k, c, t)
cmd = "plot" . box(0, '#0072B2', 'parameters') . box(1, '#D55E00', 'gradients') . \
      box(2, '#009E73', 'momentum') . box(3, '#bbbbbb', 'activations') . box(4, '#E69F00', 'scratch (ring, exchange)')
if (!flat) { # forward's marks on one line, backward's below them: the last forward and the first backward meet
    cmd = cmd . ", data using (column('event') + 0.5):(0):(column('pass') == 1 ? tic(1, column('layer')) : '') " . \
          "with labels offset 0, -0.9 notitle" . \
          ", data using (column('event') + 0.5):(0):(column('pass') == 1 ? '' : tic(column('pass'), column('layer'))) " . \
          "with labels offset 0, -1.9 notitle"
}
eval cmd
