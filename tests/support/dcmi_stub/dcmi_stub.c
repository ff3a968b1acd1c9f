/* A stand-in libdcmi.so: answers the DCMI calls npu-dra makes from a host description file.
 *
 * The file is named by DCMI_STUB_HOST and re-read on every call, so a test injects a fault
 * (a chip's health word, its current error codes, a failing dcmi_init) by rewriting it while
 * the code under test runs. Lines (tests/support/dcmi_stub.py writes them):
 *   init_rc <rc>
 *   error_count <n>      (reported by dcmi_get_device_errorcode_v2 whatever the codes: a fault)
 *   chip <card> <device> <logic> <phys> <health> <mem MB> <hbm MB> <aicores> <domain> <bus>
 *        <dev> <func> <name> <type> <affinity cpus|-> <hex codes,comma-separated|-> <board id>
 *   subscribe_rc <rc>    (what dcmi_subscribe_fault_event answers: -8255 where unsupported)
 *   call_delay_ms <n>    (each vNPU call first sleeps this long, outside any lock: a slow driver)
 *   device_ip <card> <device> <a.b.c.d> <mask a.b.c.d>, spod <card> <device> <sdid> <super pod
 *        id> <server id>   (after the chip's line: its RoCE address, its SuperPoD; else -8255)
 *   vnpu_totals <9 counts>, vnpu_template <name> <9 counts>   (aicore memory aicpu vpc venc
 *        vdec jpegd jpege pngd; -1: the chip has none of it): what vNPUs may take of each chip
 * A bus of -1 or an hbm of 0 means the chip does not support the query (-8255).
 * vNPUs (dcmi_stub_vnpu.c) and fault events (dcmi_stub_events.c) are in files of their own.
 * Declarations and return codes: dcmi_stub.h (sources named there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcmi_stub_host.h"

static _Thread_local struct host current;

static void parse_line(struct host *h, const char *line) {
    struct chip *c = &h->chips[h->chip_count];
    struct vnpu_template *t = &h->templates[h->template_count];
    long long *n = t->needs, *v = h->vnpu_totals;
    if (sscanf(line, "init_rc %d", &h->init_rc) == 1) return;
    if (sscanf(line, "error_count %d", &h->forced_error_count) == 1) return;
    if (sscanf(line, "subscribe_rc %d", &h->subscribe_rc) == 1) return;
    if (sscanf(line, "call_delay_ms %d", &h->call_delay_ms) == 1) return;
    if (stub_parse_network(h, line)) return;
    if (sscanf(line, "vnpu_totals %lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9)
        return;
    if (h->template_count < MAX_TEMPLATES &&
        sscanf(line, "vnpu_template %31s %lld %lld %lld %lld %lld %lld %lld %lld %lld", t->name,
               &n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7], &n[8]) == 10) {
        h->template_count++;
        return;
    }
    if (h->chip_count < MAX_CHIPS &&
        sscanf(line, "chip %d %d %d %d %u %llu %llu %u %d %d %d %d %31s %31s %63s %1023s %u",
               &c->card, &c->device, &c->logic, &c->phys, &c->health, &c->mem_mb, &c->hbm_mb,
               &c->aicores, &c->domain, &c->bus, &c->dev, &c->func, c->name, c->type, c->affinity,
               c->codes, &c->board) == 17)
        h->chip_count++;
}

int stub_load(struct host **host) {
    const char *path = getenv("DCMI_STUB_HOST");
    FILE *file = path ? fopen(path, "r") : NULL;
    char line[2048];
    struct host *h = &current;
    *host = h;
    h->chip_count = h->init_rc = h->subscribe_rc = h->template_count = h->call_delay_ms = 0;
    h->forced_error_count = -1;
    for (int i = 0; i < VNPU_RESOURCES; i++) h->vnpu_totals[i] = -1;
    if (file == NULL) return STUB_ERR_INTERNAL;
    memset(h->chips, 0, sizeof h->chips);
    while (fgets(line, sizeof line, file) != NULL) parse_line(h, line);
    fclose(file);
    return h->init_rc;
}

static int load(void) {
    struct host *h;
    return stub_load(&h);
}

struct chip *stub_find(int card, int device, int *rc) {
    *rc = load();
    if (*rc != STUB_OK) return NULL;
    for (int i = 0; i < current.chip_count; i++)
        if (current.chips[i].card == card && current.chips[i].device == device)
            return &current.chips[i];
    *rc = STUB_ERR_PARAMETER;
    return NULL;
}

void stub_delay(void) {
    struct timespec pause = {current.call_delay_ms / 1000, (current.call_delay_ms % 1000) * 1000000L};
    if (current.call_delay_ms > 0) nanosleep(&pause, NULL);
}

int dcmi_init(void) { return load(); }

int dcmi_get_card_list(int *card_num, int *card_list, int list_len) {
    int rc = load(), count = 0;
    if (rc != STUB_OK) return rc;
    for (int i = 0; i < current.chip_count; i++) {
        int seen = 0;
        for (int j = 0; j < count; j++) seen |= card_list[j] == current.chips[i].card;
        if (!seen && count < list_len) card_list[count++] = current.chips[i].card;
    }
    *card_num = count;
    return STUB_OK;
}

int dcmi_get_device_num_in_card(int card_id, int *device_num) {
    int rc = load();
    if (rc != STUB_OK) return rc;
    *device_num = 0;
    for (int i = 0; i < current.chip_count; i++) *device_num += current.chips[i].card == card_id;
    return *device_num ? STUB_OK : STUB_ERR_PARAMETER;
}

int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (c) *device_logic_id = c->logic;
    return rc;
}

int dcmi_get_device_phyid_from_logicid(unsigned int logicid, unsigned int *phyid) {
    int rc = load();
    if (rc != STUB_OK) return rc;
    for (int i = 0; i < current.chip_count; i++)
        if ((unsigned int)current.chips[i].logic == logicid) {
            *phyid = (unsigned int)current.chips[i].phys;
            return STUB_OK;
        }
    return STUB_ERR_PARAMETER;
}

int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *chip_info) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (!c) return rc;
    memset(chip_info, 0, sizeof *chip_info);
    strncpy((char *)chip_info->chip_type, c->type, STUB_CHIP_NAME_LEN - 1);
    strncpy((char *)chip_info->chip_name, c->name, STUB_CHIP_NAME_LEN - 1);
    strncpy((char *)chip_info->chip_ver, "V1", STUB_CHIP_NAME_LEN - 1);
    chip_info->aicore_cnt = c->aicores;
    return STUB_OK;
}

int dcmi_get_device_pcie_info_v2(int card_id, int device_id, struct dcmi_pcie_info_all *info) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (!c) return rc;
    if (c->bus < 0) return STUB_ERR_NOT_SUPPORTED;
    memset(info, 0, sizeof *info);
    info->venderid = 0x19e5; /* Huawei's PCI vendor id */
    info->domain = c->domain;
    info->bdf_busid = (unsigned int)c->bus;
    info->bdf_deviceid = (unsigned int)c->dev;
    info->bdf_funcid = (unsigned int)c->func;
    return STUB_OK;
}

int dcmi_get_device_health(int card_id, int device_id, unsigned int *health) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (c) *health = c->health;
    return rc;
}

int dcmi_get_device_errorcode_v2(int card_id, int device_id, int *error_count,
                                 unsigned int *error_code_list, unsigned int list_len) {
    int rc, count = 0;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (!c) return rc;
    if (strcmp(c->codes, "-") != 0) {
        char codes[1024], *save = NULL;
        strcpy(codes, c->codes);
        for (char *tok = strtok_r(codes, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            if ((unsigned int)count < list_len)
                error_code_list[count++] = (unsigned int)strtoul(tok, NULL, 16);
    }
    *error_count = current.forced_error_count >= 0 ? current.forced_error_count : count;
    return STUB_OK;
}

int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (!c) return rc;
    if (c->hbm_mb == 0) return STUB_ERR_NOT_SUPPORTED;
    memset(hbm_info, 0, sizeof *hbm_info);
    hbm_info->memory_size = c->hbm_mb;
    hbm_info->temp = 40;
    return STUB_OK;
}

int dcmi_get_device_memory_info_v3(int card_id, int device_id,
                                   struct dcmi_get_memory_info_stru *memory_info) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (!c) return rc;
    memset(memory_info, 0, sizeof *memory_info);
    memory_info->memory_size = c->mem_mb;
    memory_info->memory_available = c->mem_mb;
    return STUB_OK;
}

int dcmi_get_device_board_info(int card_id, int device_id, struct dcmi_board_info *board_info) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (!c) return rc;
    memset(board_info, 0, sizeof *board_info);
    board_info->board_id = c->board;
    return STUB_OK;
}

int dcmi_get_affinity_cpu_info_by_device_id(int card_id, int device_id, char *affinity_cpu,
                                            int *length) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (!c) return rc;
    if (strcmp(c->affinity, "-") == 0) return STUB_ERR_NOT_SUPPORTED;
    *length = (int)strlen(c->affinity); /* no terminator counted, as Go's GoStringN reads it */
    memcpy(affinity_cpu, c->affinity, (size_t)*length);
    return STUB_OK;
}
