import { sgOpenDetector } from './sg-open';
import { coversPort } from './shared';

/**
 * S1 — RDP open to the Internet: an ingress rule from 0.0.0.0/0 or ::/0 with protocol -1, or TCP or
 * UDP with from_port <= 3389 <= to_port (containment). UDP counts here, unlike SSH: RDP 8+ carries
 * sessions over UDP 3389 too, and Steampipe's `vpc_security_group_remote_administration` counts TCP,
 * UDP and -1. Only in-use groups, and not groups the all-ports check already reports (Prowler).
 * (steampipe-mod-aws-compliance `vpc_security_group_restrict_ingress_rdp_all`; Prowler
 * `ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_3389`; Checkov `CKV_AWS_25`)
 */
export const sgRdpOpen = sgOpenDetector({
  id: 'security.sg_rdp_open',
  title: 'Security groups open to the Internet on RDP (3389)',
  what: 'RDP (3389)',
  match: coversPort(3389, ['tcp', 'udp']),
  matchText: 'protocol -1, or tcp/udp with from_port <= 3389 <= to_port',
  skipAllPorts: true,
  risk: 'Exposed RDP is one of the most common ransomware entry points: credential stuffing and RDP vulnerabilities (BlueKeep-style) are tried against every address that answers.',
  fix: 'Remove the 0.0.0.0/0 / ::/0 source (add the VPN or bastion range instead if RDP is needed), or reach the hosts through SSM Fleet Manager / a Remote Desktop gateway.',
});
