/* The stand-in's vNPUs: dcmi_create_vdevice, dcmi_set_destroy_vdevice and the two
 * dcmi_get_device_info queries of DCMI_MAIN_CMD_VDEV_MNG that list them, with the driver's rules
 * as npu-dra knows them (ascend-facts A.7): a vNPU id is unique host-wide and lies in its chip's
 * range ([100 + 16 * phys, +16), 8 ids on a 310P); a chip holds vNPUs only while their templates
 * together stay within its totals; creating an existing id or destroying a missing one fails.
 *
 * The vNPUs live in "<DCMI_STUB_HOST>.vnpus" (lines: vnpu <card> <device> <id> <vfg> <template>),
 * changed under an exclusive lock, so concurrent callers see one table.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "dcmi_stub_host.h"

#define MAX_VNPUS 512

struct vnpu {
    int card, device;
    unsigned int id, vfg;
    char template_name[STUB_TEMPLATE_NAME_LEN];
};

struct table {
    struct vnpu vnpus[MAX_VNPUS];
    int count;
    int lock_fd;
    char path[4200];
};

static int open_table(struct table *t) {
    const char *host = getenv("DCMI_STUB_HOST");
    char lock_path[4300], line[256];
    if (host == NULL || strlen(host) > 4000) return STUB_ERR_INTERNAL;
    snprintf(t->path, sizeof t->path, "%s.vnpus", host);
    snprintf(lock_path, sizeof lock_path, "%s.lock", t->path);
    t->lock_fd = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (t->lock_fd < 0 || flock(t->lock_fd, LOCK_EX) != 0) return STUB_ERR_INTERNAL;
    t->count = 0;
    FILE *file = fopen(t->path, "r");
    while (file != NULL && fgets(line, sizeof line, file) != NULL && t->count < MAX_VNPUS) {
        struct vnpu *v = &t->vnpus[t->count];
        if (sscanf(line, "vnpu %d %d %u %u %31s", &v->card, &v->device, &v->id, &v->vfg,
                   v->template_name) == 5)
            t->count++;
    }
    if (file != NULL) fclose(file);
    return STUB_OK;
}

static int close_table(struct table *t, int save, int rc) {
    if (save) {
        char partial[4300];
        snprintf(partial, sizeof partial, "%s.partial", t->path);
        FILE *file = fopen(partial, "w");
        if (file == NULL) rc = STUB_ERR_INTERNAL;
        for (int i = 0; file != NULL && i < t->count; i++) {
            struct vnpu *v = &t->vnpus[i];
            fprintf(file, "vnpu %d %d %u %u %s\n", v->card, v->device, v->id, v->vfg,
                    v->template_name);
        }
        if (file != NULL && (fclose(file) != 0 || rename(partial, t->path) != 0))
            rc = STUB_ERR_INTERNAL;
    }
    close(t->lock_fd);
    return rc;
}

static const struct vnpu_template *template_named(const struct host *h, const char *name) {
    for (int i = 0; i < h->template_count; i++)
        if (strcmp(h->templates[i].name, name) == 0) return &h->templates[i];
    return NULL;
}

/* Whether the chip's vNPUs and one more of `adding` fit within its totals. */
static int fits(const struct host *h, const struct table *t, const struct chip *c,
                const struct vnpu_template *adding) {
    for (int r = 0; r < VNPU_RESOURCES; r++) {
        long long used = adding->needs[r] > 0 ? adding->needs[r] : 0;
        for (int i = 0; i < t->count; i++) {
            const struct vnpu *v = &t->vnpus[i];
            const struct vnpu_template *of = template_named(h, v->template_name);
            if (v->card == c->card && v->device == c->device && of && of->needs[r] > 0)
                used += of->needs[r];
        }
        long long total = h->vnpu_totals[r] > 0 ? h->vnpu_totals[r] : 0;
        if (used > 0 && used > total) return 0;
    }
    return 1;
}

static int refused(const struct host *h, const struct table *t, const struct chip *c,
                   unsigned int id, const struct vnpu_template *of) {
    unsigned int first = 100 + 16 * (unsigned int)c->phys;
    unsigned int ids = strncmp(c->name, "310P", 4) == 0 ? 8 : 16;
    if (of == NULL || id < first || id >= first + ids) return 1;
    for (int i = 0; i < t->count; i++)
        if (t->vnpus[i].id == id) return 1;
    return !fits(h, t, c, of) || t->count >= MAX_VNPUS;
}

int dcmi_create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru *vdev,
                        struct dcmi_create_vdev_out *out) {
    struct host *h;
    struct table t;
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (c == NULL) return rc;
    stub_delay();
    stub_load(&h);
    char name[STUB_TEMPLATE_NAME_LEN];
    memcpy(name, vdev->template_name, sizeof name);
    name[sizeof name - 1] = '\0';
    if (open_table(&t) != STUB_OK) return STUB_ERR_INTERNAL;
    const struct vnpu_template *of = template_named(h, name);
    if (refused(h, &t, c, vdev->vdev_id, of)) return close_table(&t, 0, STUB_ERR_PARAMETER);
    unsigned int vfg = 0;
    for (int i = 0; i < t.count; i++)
        vfg += t.vnpus[i].card == card_id && t.vnpus[i].device == device_id;
    struct vnpu *v = &t.vnpus[t.count++];
    v->card = card_id, v->device = device_id, v->id = vdev->vdev_id, v->vfg = vfg;
    strcpy(v->template_name, of->name);
    memset(out, 0, sizeof *out);
    out->vdev_id = v->id;
    out->vfg_id = vfg;
    return close_table(&t, 1, STUB_OK);
}

int dcmi_set_destroy_vdevice(int card_id, int device_id, unsigned int vdevid) {
    struct table t;
    int rc, kept = 0, found = 0;
    if (stub_find(card_id, device_id, &rc) == NULL) return rc;
    stub_delay();
    if (open_table(&t) != STUB_OK) return STUB_ERR_INTERNAL;
    for (int i = 0; i < t.count; i++) {
        struct vnpu *v = &t.vnpus[i];
        int match = v->card == card_id && v->device == device_id && v->id == vdevid;
        found |= match;
        if (!match) t.vnpus[kept++] = *v;
    }
    t.count = kept;
    return close_table(&t, found, found ? STUB_OK : STUB_ERR_PARAMETER);
}

static int query(const struct table *t, int card, int device, struct dcmi_vdev_query_stru *q) {
    for (int i = 0; i < t->count; i++) {
        const struct vnpu *v = &t->vnpus[i];
        if (v->card != card || v->device != device || v->id != q->vdev_id) continue;
        memset(&q->query_info, 0, sizeof q->query_info);
        strncpy(q->query_info.name, v->template_name, STUB_VDEV_RES_NAME_LEN - 1);
        q->query_info.vfg_id = v->vfg;
        q->query_info.base.vfg_id = v->vfg;
        return STUB_OK;
    }
    return STUB_ERR_PARAMETER;
}

static int total(const struct table *t, int card, int device, struct dcmi_soc_total_resource *r) {
    memset(r, 0, sizeof *r);
    for (int i = 0; i < t->count && r->vdev_num < STUB_SOC_SPLIT_MAX; i++)
        if (t->vnpus[i].card == card && t->vnpus[i].device == device)
            r->vdev_id[r->vdev_num++] = t->vnpus[i].id;
    r->vfg_num = r->vdev_num;
    return STUB_OK;
}

int dcmi_get_device_info(int card_id, int device_id, int main_cmd, unsigned int sub_cmd,
                         void *buf, unsigned int *size) {
    struct table t;
    int rc;
    if (stub_find(card_id, device_id, &rc) == NULL) return rc;
    if (main_cmd == STUB_MAIN_CMD_CHIP_INF) return stub_chip_info(card_id, device_id, sub_cmd, buf, size);
    stub_delay();
    if (main_cmd != STUB_MAIN_CMD_VDEV_MNG) return STUB_ERR_NOT_SUPPORTED;
    if (sub_cmd == STUB_VMNG_SUB_CMD_GET_VDEV_RESOURCE) {
        if (*size < sizeof(struct dcmi_vdev_query_stru)) return STUB_ERR_PARAMETER;
        if (open_table(&t) != STUB_OK) return STUB_ERR_INTERNAL;
        return close_table(&t, 0, query(&t, card_id, device_id, buf));
    }
    if (sub_cmd == STUB_VMNG_SUB_CMD_GET_TOTAL_RESOURCE) {
        if (*size < sizeof(struct dcmi_soc_total_resource)) return STUB_ERR_PARAMETER;
        if (open_table(&t) != STUB_OK) return STUB_ERR_INTERNAL;
        return close_table(&t, 0, total(&t, card_id, device_id, buf));
    }
    return STUB_ERR_NOT_SUPPORTED;
}
