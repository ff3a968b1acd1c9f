/* The stand-in's host description, shared by its source files (not part of the DCMI API).
 *
 * Each thread parses the file into its own copy (ctypes calls the library from several Python
 * threads at once, and the fault watcher has a thread of its own).
 */
#ifndef NPU_DRA_DCMI_STUB_HOST_H
#define NPU_DRA_DCMI_STUB_HOST_H

#include "dcmi_stub.h"

#define MAX_CHIPS 64
#define MAX_TEMPLATES 16
#define VNPU_RESOURCES 9 /* aicore memory aicpu vpc venc vdec jpegd jpege pngd; -1: none */

struct chip {
    int card, device, logic, phys;
    unsigned int health;
    unsigned long long mem_mb, hbm_mb;
    unsigned int aicores;
    int domain, bus, dev, func;
    char name[STUB_CHIP_NAME_LEN], type[STUB_CHIP_NAME_LEN];
    char affinity[64], codes[1024];
    unsigned int board;
    int has_ip, has_spod; /* dcmi_stub_network.c */
    unsigned char ip[4], mask[4];
    unsigned int sdid, super_pod_id, server_id;
};

struct vnpu_template {
    char name[STUB_TEMPLATE_NAME_LEN];
    long long needs[VNPU_RESOURCES];
};

struct host {
    struct chip chips[MAX_CHIPS];
    int chip_count, init_rc, forced_error_count, subscribe_rc, call_delay_ms;
    long long vnpu_totals[VNPU_RESOURCES];
    struct vnpu_template templates[MAX_TEMPLATES];
    int template_count;
};

/* This thread's copy of the host file, read again now; the file's init_rc (or an internal error
 * if it cannot be read). */
int stub_load(struct host **host);
/* The chip at (card, device) after stub_load; NULL with *rc set when there is none. */
struct chip *stub_find(int card, int device, int *rc);
/* Whether `line` is a network line (dcmi_stub_network.c), read into its chip of `h`. */
int stub_parse_network(struct host *h, const char *line);
/* dcmi_get_device_info's DCMI_MAIN_CMD_CHIP_INF queries (the SuperPoD info). */
int stub_chip_info(int card, int device, unsigned int sub_cmd, void *buf, unsigned int *size);
/* Sleep the host file's call_delay_ms (read by the last stub_load on this thread). */
void stub_delay(void);

#endif
