/* A node's configuration file, node.yaml (docs/node.md has every key):
 * parsed strictly (an unknown key, a missing required key or a bad value is
 * refused with the key's name) into a checked gd_member_settings, and
 * written, with a comment per key, by `gonka-diloco node init`. */
#ifndef GD_PLUGIN_MEMBER_MEMBER_SETTINGS_H
#define GD_PLUGIN_MEMBER_MEMBER_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/keys/address.h"
#include "common/log.h"
#include "common/status.h"
#include "trainer/settings.h"

#define GD_SETTINGS_TEXT_MAX 512
#define GD_SETTINGS_DATA_MAX 16

typedef struct gd_member_settings {
    char rpc[GD_SETTINGS_TEXT_MAX];        /* chain.rpc: CometBFT RPC URL */
    char chain_id[64];                 /* chain.chain_id */
    char key[GD_SETTINGS_TEXT_MAX];        /* chain.key: key file path */
    char gas_price[96];                /* chain.gas_price, e.g. 0.0025ngonka */
    uint64_t run;                      /* run */
    unsigned roles;                    /* GD_ROLE_WORKER | GD_ROLE_VALIDATOR */
    char collateral[96];               /* collateral: a coin, e.g. 100000000ngonka */
    char hardware_class[129];          /* hardware_class: "auto" or the class string */
    char listen_host[256];             /* listen: host:port */
    uint16_t listen_port;
    char public_url[GD_SETTINGS_TEXT_MAX]; /* public_url: where peers reach listen */
    char state_dir[GD_SETTINGS_TEXT_MAX];  /* state_dir */
    char data[GD_SETTINGS_DATA_MAX][GD_SETTINGS_TEXT_MAX]; /* data: local paths of the run's data */
    unsigned n_data;
    unsigned threads;                  /* threads: 0 = one per core */
    char backend[8];                   /* backend: auto, cpu, cuda */
    unsigned gpus;                     /* gpus: data-parallel ranks, 1.. */
    gd_memory_settings memory;         /* shard, recompute, offload */
    uint64_t memory_budget;            /* memory_budget: host bytes a round may use beside
                                        * the trainer's buffers; 0 = no limit */
    uint32_t hot_rounds;               /* retention.hot_rounds: 2.. (default 2) */
    uint32_t archive_every;            /* retention.archive_every: 0 = no archive */
    char archive_dir[GD_SETTINGS_TEXT_MAX]; /* retention.archive_dir: "" = none */
    char log_level[GD_LOG_SPEC_MAX + 1]; /* log_level: "info", or per subsystem
                                          * "info,http=debug" (common/log.h) */
    char log_format[8];                /* log_format: text or json */
} gd_member_settings;

/* Parses YAML text (named `what` in errors) into s: GD_ERR_PARSE for what
 * is not YAML of the schema (the unknown or missing key named), and
 * GD_ERR_INVALID naming the key whose value is wrong. */
gd_status gd_member_settings_parse(gd_member_settings *s, const char *text, size_t len,
                                   const char *what) GD_MUST_CHECK;
/* Reads and parses a node.yaml file (at most 64 KiB). */
gd_status gd_member_settings_load(gd_member_settings *s, const char *path) GD_MUST_CHECK;

/* The node.yaml text `node init` writes: every key, each with its comment;
 * out holds at least 8 KiB. */
gd_status gd_member_settings_format(const gd_member_settings *s, char *out,
                                    size_t cap) GD_MUST_CHECK;

#endif
