# style.gp — the kit's shared gnuplot style, loaded before every plot script.
# Variables set by dl_plot: fmt (png|svg|dumb) and out (the file to write).
#
# Plots are read on slides and projectors, shrunk to a third of a screen:
# every text is at least 1/60 of the canvas's width (16 px on the 960-px
# canvas; tools/check-plots.sh fails a plot that has less). So a title is
# one short line, and what needs a sentence goes to the plot's caption (the
# lab's lab.mk: the report and the decks print it under the plot).
if (!exists("fmt")) fmt = 'png'
if (!exists("out")) out = ''
canvas_w = 960
canvas_h = 600
font_px = 16 # = canvas_w / 60: the smallest text a plot may have
# pngcairo sizes fonts in points at 72 dpi and then scales them by 4/3 (its
# `fontscale` default), so 12 gives the same 16 px as the SVG's 16
if (fmt eq 'png') { set terminal pngcairo size canvas_w,canvas_h enhanced font 'DejaVu Sans,12' }
if (fmt eq 'svg') { set terminal svg size canvas_w,canvas_h enhanced font 'DejaVu Sans,16' background rgb 'white' }
if (fmt eq 'dumb') { set terminal dumb size 110,32 }
if (fmt ne 'dumb') { set output out }

# sub(s): a second title line. It used to be set smaller; it is now the same
# size as every other text (smaller would not read on a slide): keep it short
# (about 80 characters fit the canvas), or move it to the caption.
sub(s) = s

# pow10: the tic format of a log axis, "10" with its exponent raised but not
# shrunk (enhanced text's ^ sets it at 0.8 of the font, under the minimum):
# set format y pow10
pow10 = (fmt eq 'dumb') ? '10^%L' : sprintf('10^{/=%d %%L}', fmt eq 'png' ? 12 : font_px)
# pow2: the same for a log-2 axis (set format y pow2); sup(s): any exponent
# text raised at full size (sprintf("2^%s", sup("16")))
pow2 = (fmt eq 'dumb') ? '2^%L' : sprintf('2^{/=%d %%L}', fmt eq 'png' ? 12 : font_px)
sup(s) = (fmt eq 'dumb') ? s : sprintf('{/=%d %s}', fmt eq 'png' ? 12 : font_px, s)

set datafile separator ','
set datafile missing 'nan'
set key autotitle columnhead
set key top right box opaque samplen 2
set grid lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set mxtics
set style data lines

# Okabe–Ito colours: readable for colour-blind readers and in print.
set style line 1 lc rgb '#0072B2' lw 2.5 pt 7 ps 0.6
set style line 2 lc rgb '#D55E00' lw 2.5 pt 5 ps 0.6
set style line 3 lc rgb '#009E73' lw 2.5 pt 9 ps 0.6
set style line 4 lc rgb '#CC79A7' lw 2.5 pt 11 ps 0.6
set style line 5 lc rgb '#E69F00' lw 2.5 pt 13 ps 0.6
set style line 6 lc rgb '#56B4E9' lw 2.5 pt 15 ps 0.6
set style line 7 lc rgb '#000000' lw 1.5 dt 2
set style increment user

# The terminal has one "pen": a grid there only hides the curves.
if (fmt eq 'dumb') { unset grid; set key nobox noopaque }

# Message sizes are powers of two: label them with binary prefixes (1 KiB =
# 1024 B), never with gnuplot's decimal-ticked "%B" ("98ki" at 100000).
# bytes_label(x) is such a label; `eval bytes_axis('x')` makes an axis of
# bytes: log base 2, a labelled tic every 16x, a minor tic every 2x.
bytes_label(x) = x >= 2.0**30 ? sprintf('%g GiB', x / 2.0**30) : \
                 x >= 2.0**20 ? sprintf('%g MiB', x / 2.0**20) : \
                 x >= 2.0**10 ? sprintf('%g KiB', x / 2.0**10) : sprintf('%g B', x)
bytes_axis(ax) = sprintf("set logscale %s 2; set %stics (); do for [i = 0:44] { set %stics add (i %% 4 == 0 ? bytes_label(2.0**i) : '' 2.0**i i %% 4 != 0) }", ax, ax, ax)

# A key below the plot, clear of the data and of the x label: gnuplot's own
# `set key below` lets its box cut through the x label, so the key sits at the
# bottom of the canvas and the bottom margin makes room for `rows` lines of it.
# Use: eval key_below(2)
key_below(rows) = sprintf("set key at screen 0.5, screen 0.012 center bottom horizontal %s; set bmargin %g", \
                          fmt eq 'dumb' ? 'nobox noopaque' : 'box opaque', 4.2 + 1.25 * rows)
