/* gonka-diloco executable. */
#include <stdio.h>

#include "plugin/cli/cli.h"

int main(int argc, char **argv) { return gd_cli_main(stdout, argc, argv, stderr); }
