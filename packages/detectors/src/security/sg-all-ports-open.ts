import { sgOpenDetector } from './sg-open';
import { coversAllPorts } from './shared';

/**
 * All ports open to the Internet: an ingress rule from 0.0.0.0/0 or ::/0 with protocol -1 (all
 * traffic), or TCP/UDP over the full 0–65535 range. Only in-use groups (attached to a live instance).
 * The SSH and RDP checks skip a group reported here, as Prowler's do.
 * (Prowler `ec2_securitygroup_allow_ingress_from_internet_to_all_ports`; steampipe-mod-aws-compliance
 * `vpc_security_group_restrict_ingress_tcp_udp_all`)
 */
export const sgAllPortsOpen = sgOpenDetector({
  id: 'security.sg_all_ports_open',
  title: 'Security groups open to the Internet on all ports',
  what: 'every port',
  match: coversAllPorts(),
  matchText: 'protocol -1, or tcp/udp with from_port <= 0 and to_port >= 65535',
  skipAllPorts: false,
  risk: 'Every service listening on these hosts — SSH, RDP, databases, admin consoles, debug ports — is reachable by anyone; the group filters nothing.',
  fix: 'Replace the rule with rules for the ports the service actually serves (e.g. 443), from the sources that need them (a load balancer’s group, a VPN range).',
});
