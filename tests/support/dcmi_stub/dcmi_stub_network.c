/* The stand-in's network facts: each chip's RoCE address (dcmi_get_device_ip, port type 1) and
 * SuperPoD info (dcmi_get_device_info, DCMI_MAIN_CMD_CHIP_INF / sub command 1), from the host
 * file's `device_ip` and `spod` lines; a chip without such a line answers -8255, as a chip
 * without the feature does. Declarations: dcmi_stub.h (sources named there).
 */
#include <stdio.h>
#include <string.h>

#include "dcmi_stub_host.h"

static struct chip *chip_of(struct host *h, int card, int device) {
    for (int i = 0; i < h->chip_count; i++)
        if (h->chips[i].card == card && h->chips[i].device == device) return &h->chips[i];
    return NULL;
}

int stub_parse_network(struct host *h, const char *line) {
    int card, device;
    unsigned int a[4], m[4], sdid, pod, server;
    struct chip *c;
    if (sscanf(line, "device_ip %d %d %u.%u.%u.%u %u.%u.%u.%u", &card, &device, &a[0], &a[1],
               &a[2], &a[3], &m[0], &m[1], &m[2], &m[3]) == 10) {
        if ((c = chip_of(h, card, device)) == NULL) return 1;
        for (int i = 0; i < 4; i++) c->ip[i] = (unsigned char)a[i], c->mask[i] = (unsigned char)m[i];
        c->has_ip = 1;
        return 1;
    }
    if (sscanf(line, "spod %d %d %u %u %u", &card, &device, &sdid, &pod, &server) == 5) {
        if ((c = chip_of(h, card, device)) == NULL) return 1;
        c->sdid = sdid, c->super_pod_id = pod, c->server_id = server, c->has_spod = 1;
        return 1;
    }
    return 0;
}

int dcmi_get_device_ip(int card_id, int device_id, int input_type, int port_id,
                       struct dcmi_ip_addr *ip, struct dcmi_ip_addr *mask) {
    int rc;
    struct chip *c = stub_find(card_id, device_id, &rc);
    if (c == NULL) return rc;
    if (ip == NULL || mask == NULL || port_id != 0) return STUB_ERR_PARAMETER;
    if (input_type != STUB_ROCE_PORT || !c->has_ip) return STUB_ERR_NOT_SUPPORTED;
    memset(ip, 0, sizeof *ip);
    memset(mask, 0, sizeof *mask);
    memcpy(ip->u_addr.ip4, c->ip, 4);
    memcpy(mask->u_addr.ip4, c->mask, 4);
    return STUB_OK;
}

int stub_chip_info(int card, int device, unsigned int sub_cmd, void *buf, unsigned int *size) {
    int rc;
    struct chip *c = stub_find(card, device, &rc);
    struct dcmi_spod_info *info = buf;
    if (c == NULL) return rc;
    if (sub_cmd != STUB_CINF_SUB_CMD_GET_SPOD_INFO || !c->has_spod) return STUB_ERR_NOT_SUPPORTED;
    if (*size < sizeof *info) return STUB_ERR_PARAMETER;
    memset(info, 0, sizeof *info);
    info->sdid = c->sdid, info->super_pod_id = c->super_pod_id, info->server_id = c->server_id;
    *size = sizeof *info;
    return STUB_OK;
}
