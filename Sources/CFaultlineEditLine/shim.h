#ifndef CFAULTLINE_EDITLINE_SHIM_H
#define CFAULTLINE_EDITLINE_SHIM_H
#include <stdio.h>
#include <editline/readline.h>
#endif
