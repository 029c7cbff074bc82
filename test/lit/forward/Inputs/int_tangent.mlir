func.func @f(%n: index) -> index {
  func.return %n : index
}
func.func @main(%n: index, %dn: index) -> index {
  %r = ad.fwddiff @f(%n, %dn) {activity = [dup], ret_activity = [const]} : (index, index) -> index
  func.return %r : index
}
