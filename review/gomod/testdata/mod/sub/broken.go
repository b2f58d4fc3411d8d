package sub

func (
