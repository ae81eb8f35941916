/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Preflight checks before (and after a failed) rte_eal_init(); see
 * tw_preflight.h. Reads a few sysfs and procfs files, nothing else.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_preflight.h"

static int
read_text(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (int)n;
}

static bool
dpdk_driver(const char *name)
{
	return strcmp(name, "vfio-pci") == 0 || strcmp(name, "igb_uio") == 0 ||
	       strcmp(name, "uio_pci_generic") == 0;
}

static int
check_pci_port(const struct tw_cfg_port *port, const char *root, FILE *out)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *driver;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s", root, port->devname);
	if (access(path, F_OK) != 0) {
		fprintf(out, "preflight: port %s: PCI device %s does not exist on this machine\n",
			port->name, port->devname);
		fprintf(out, "  fix: lspci -D | grep -i ethernet   "
			"# and correct [port.%s] pci in ports.ini\n", port->name);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/driver", root, port->devname);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		fprintf(out, "preflight: port %s: PCI device %s has no driver bound\n",
			port->name, port->devname);
		fprintf(out, "  fix: sudo modprobe vfio-pci && sudo dpdk-devbind.py --bind=vfio-pci %s\n",
			port->devname);
		return 1;
	}
	link[n] = '\0';
	driver = strrchr(link, '/') != NULL ? strrchr(link, '/') + 1 : link;
	if (!dpdk_driver(driver)) {
		fprintf(out, "preflight: port %s: PCI device %s is bound to the kernel driver %s, "
			"not to a DPDK driver\n", port->name, port->devname, driver);
		fprintf(out, "  fix: sudo ip link set dev $(ls %s/sys/bus/pci/devices/%s/net) down && "
			"sudo modprobe vfio-pci && sudo dpdk-devbind.py --bind=vfio-pci %s\n",
			root[0] ? root : "", port->devname, port->devname);
		return 1;
	}
	return 0;
}

static int
check_hugepages(const struct tw_cfg *cfg, const char *root, FILE *out)
{
	char path[PATH_MAX], buf[4096];
	uint64_t kib = cfg->eal.hugepage_size != 0 ? cfg->eal.hugepage_size / 1024 : 2048;
	uint64_t need = tw_cfg_memory_bytes(cfg);
	uint64_t pages = (need + kib * 1024 - 1) / (kib * 1024);
	int problems = 0;

	snprintf(path, sizeof(path), "%s/sys/kernel/mm/hugepages/hugepages-%" PRIu64 "kB/nr_hugepages",
		 root, kib);
	if (read_text(path, buf, sizeof(buf)) < 0 || strtoull(buf, NULL, 10) == 0) {
		fprintf(out, "preflight: no %" PRIu64 " kB hugepages are reserved "
			"(the profile needs %" PRIu64 " MiB)\n", kib, need >> 20);
		fprintf(out, "  fix: echo %" PRIu64 " | sudo tee %s   "
			"# or set eal.no_huge = true in ports.ini for a test run\n", pages, path);
		problems++;
	}
	snprintf(path, sizeof(path), "%s/proc/mounts", root);
	if (read_text(path, buf, sizeof(buf)) >= 0 && strstr(buf, "hugetlbfs") == NULL) {
		fprintf(out, "preflight: no hugetlbfs is mounted\n");
		fprintf(out, "  fix: sudo mkdir -p /dev/hugepages && "
			"sudo mount -t hugetlbfs nodev /dev/hugepages\n");
		problems++;
	}
	return problems;
}

int
tw_preflight(const struct tw_cfg *cfg, const char *root, unsigned int euid, FILE *out)
{
	bool has_pci = false;
	int problems = 0;

	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		if (cfg->ports[i].kind != TW_CFG_PORT_PCI)
			continue;
		has_pci = true;
		if (!cfg->eal.no_pci)
			problems += check_pci_port(&cfg->ports[i], root, out);
	}
	if (!cfg->eal.no_huge)
		problems += check_hugepages(cfg, root, out);
	if (euid != 0 && (!cfg->eal.no_huge || has_pci)) {
		fprintf(out, "preflight: running as uid %u: hugepages and PCI devices need root "
			"(or CAP_SYS_ADMIN, CAP_IPC_LOCK, CAP_SYS_RAWIO and access to /dev/vfio)\n",
			euid);
		fprintf(out, "  fix: sudo %s   # or: sudo setcap "
			"cap_sys_admin,cap_ipc_lock,cap_sys_rawio,cap_dac_override+ep $(command -v tickwire)\n",
			"tickwire [EAL args] -- --ports ... --config ...");
		problems++;
	}
	return problems;
}
