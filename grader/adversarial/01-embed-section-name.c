// attack: the reference, embedding a file with no asm statement at all: an .incbin smuggled into the assembly through a section name
// lab: 01
// base: reference
// file: scaler.c
// lose: all
// status: embeds-a-file
// expect: refused \[embeds-a-file\].*\.incbin
__attribute__((used, section(".rodata.ddplab\n.inc"
                             "bin \"@KIT@/solutions/01-logreg/scaler.c\"\n.section .rodata.more")))
static const int ddplab_marker = 1;
