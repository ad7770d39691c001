# confusion.gp — lab 02: the confusion matrix of the chosen model on the test split.
# Colour: the share of each true class (a row sums to 1: the diagonal is the
# recall); numbers: the counts. Variables: data (confusion_norm.csv, with
# class names), cells (confusion_long.csv), C, subtitle.
# `with image pixels` draws each cell as its own filled rectangle. A plain
# `with image` embeds the C x C matrix as a tiny bitmap that the viewer
# scales up, and an SVG viewer smooths it into blurred blobs.
if (!exists("subtitle")) subtitle = ''
set title sprintf("Confusion matrix (rows: true class, columns: predicted)\n%s", sub(subtitle))
set size ratio -1
set xlabel 'predicted class'
set ylabel 'true class'
set xrange [-0.5:C-0.5]
set yrange [C-0.5:-0.5]
set cbrange [0:1]
set cblabel 'share of the true class'
set palette defined (0 '#ffffff', 0.15 '#c6dbef', 0.5 '#6baed6', 1 '#08306b')
set xtics rotate by -40 left nomirror
set ytics nomirror
unset grid
unset key
set tics scale 0
plot data matrix rowheaders columnheaders using 1:2:3 with image pixels, \
     cells using "predicted":"true":(sprintf('%d', column("count"))):(column("share") > 0.45 ? 0xffffff : 0x222222) \
        with labels tc rgb variable
